package main

import (
	"context"
	"log/slog"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// A serveExtension is an optional part of serve that runs beside the
// receivers and shares their storage, such as a Kafka source or the
// forwarders. Each lives in its own file, which registers its flags in
// serveExtensions from an init function, so that serve.go does not grow
// with every optional part.
type serveExtension interface {
	// start is called once storage is open, before the receivers accept
	// requests. An error stops serve before it serves.
	start(env *serveEnv) error
	// stop is called after the receivers stopped (every acknowledged
	// request is in storage) and before storage closes; ctx ends at
	// -shutdown-timeout.
	stop(ctx context.Context) error
}

// serveEnv is what serve shares with its extensions.
type serveEnv struct {
	logger  *slog.Logger
	metrics *metrics.Set
	// sink is where accepted data goes (-storage); store is the same sink
	// when it is the disk log, else nil.
	sink    storage.Sink
	store   *disk.Store
	handler *handler.Handler
	dataDir string
}

// extensionFlags is an extension's side of serve's flags.
type extensionFlags interface {
	// validate checks the extension's flag values at parse time: an
	// error is printed as one line and serve exits 2 without starting.
	validate(cfg *serveConfig) error
	// newExtension returns the extension, or nil when its flags leave it
	// off (the default: an extension is on only when configured).
	newExtension(cfg *serveConfig) (serveExtension, error)
}

// diskOptionsHook is implemented by extensionFlags whose extension needs
// a say in how the disk log is opened (forwarding keeps segments that a
// destination has not yet passed).
type diskOptionsHook interface {
	diskOptions(cfg *serveConfig, o *disk.Options) error
}

// serveExtensions holds each optional part's flag registration, in the
// order of their init functions (file name order). Each defines its flags
// in its own help section with s.add.
var serveExtensions []func(s *flagSections) extensionFlags

// startExtensions creates and starts the extensions that their flags turn
// on; on an error it stops those already started.
func startExtensions(cfg *serveConfig, env *serveEnv) ([]serveExtension, error) {
	var running []serveExtension
	for _, f := range cfg.extensions {
		ext, err := f.newExtension(cfg)
		if err == nil && ext != nil {
			err = ext.start(env)
		}
		if err != nil {
			stopExtensions(context.Background(), running, env.logger)
			return nil, err
		}
		if ext != nil {
			running = append(running, ext)
		}
	}
	return running, nil
}

// stopExtensions stops the running extensions in reverse order.
func stopExtensions(ctx context.Context, running []serveExtension, logger *slog.Logger) {
	for i := len(running) - 1; i >= 0; i-- {
		if err := running[i].stop(ctx); err != nil {
			logger.Warn("extension did not stop cleanly", "err", err)
		}
	}
}
