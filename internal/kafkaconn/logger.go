package kafkaconn

import (
	"context"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"
)

// slogLogger adapts a *slog.Logger to franz-go's kgo.Logger, so the
// client's connection failures and retries appear in the receiver's log
// (franz-go's own adapter, plugin/kslog, is a separate module).
type slogLogger struct{ l *slog.Logger }

// Level reports the most verbose kgo level the slog handler is enabled for.
func (s slogLogger) Level() kgo.LogLevel {
	ctx := context.Background()
	switch {
	case s.l.Enabled(ctx, slog.LevelDebug):
		return kgo.LogLevelDebug
	case s.l.Enabled(ctx, slog.LevelInfo):
		return kgo.LogLevelInfo
	case s.l.Enabled(ctx, slog.LevelWarn):
		return kgo.LogLevelWarn
	case s.l.Enabled(ctx, slog.LevelError):
		return kgo.LogLevelError
	}
	return kgo.LogLevelNone
}

func (s slogLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	var l slog.Level
	switch level {
	case kgo.LogLevelError:
		l = slog.LevelError
	case kgo.LogLevelWarn:
		l = slog.LevelWarn
	case kgo.LogLevelInfo:
		l = slog.LevelInfo
	default:
		l = slog.LevelDebug
	}
	s.l.Log(context.Background(), l, msg, keyvals...)
}
