package service

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/otlp-lite/otlp-lite/admin"
	"github.com/otlp-lite/otlp-lite/forward"
	"github.com/otlp-lite/otlp-lite/grpcwire"
	"github.com/otlp-lite/otlp-lite/handler"
	"github.com/otlp-lite/otlp-lite/otlp"
	"github.com/otlp-lite/otlp-lite/server"
	"github.com/otlp-lite/otlp-lite/storage"
	"github.com/otlp-lite/otlp-lite/storage/deadletter"
	"github.com/otlp-lite/otlp-lite/storage/disk"
)

// Config is a receiver's configuration. Each field is one flag of
// `otlp-lite serve` (named in its comment; its environment variable is
// OTLP_LITE_ and the name in upper case with - as _); the fields that are
// not flags say so. Start from DefaultConfig: its values are the flags'
// defaults. The zero value of a field is not always its default.
type Config struct {
	// GRPCAddr is the OTLP/gRPC listener, host:port (-grpc-addr, default
	// "localhost:4317", the OTLP default port; it serves OTLP/HTTP too).
	// Port 0 picks a free port: Service.GRPCAddr, HTTPAddr and AdminAddr tell
	// which.
	GRPCAddr string
	// HTTPAddr is the OTLP/HTTP listener (-http-addr, default
	// "localhost:4318"; it serves gRPC too); empty or equal to GRPCAddr:
	// none.
	HTTPAddr string
	// UnixSocketMode is the permission bits, in octal, of the socket files
	// of unix:PATH listeners (-unix-socket-mode, default "0660": the owner
	// and its group may connect). Every address flag takes unix:PATH.
	UnixSocketMode string
	// ProxyProtocolTrustedCIDRs are the comma-separated networks (and
	// addresses, and "unix" for Unix socket peers) of the proxies whose
	// connections must begin with a PROXY protocol header, v1 or v2, on
	// the OTLP listeners; a header from any other peer is refused
	// (-proxy-protocol-trusted-cidrs, default "": the protocol is off).
	// See server.ProxyProtocol.
	ProxyProtocolTrustedCIDRs string
	// ProxyProtocolTimeout bounds the arrival of a trusted connection's
	// PROXY header (-proxy-protocol-timeout, default
	// server.DefaultProxyHeaderTimeout).
	ProxyProtocolTimeout time.Duration
	// CORSAllowedOrigins are the comma-separated origins allowed to send
	// OTLP/HTTP from browsers (-cors-allowed-origins, default "": no CORS).
	CORSAllowedOrigins string
	// CORSAllowedHeaders are extra request headers allowed in CORS
	// requests, comma-separated (-cors-allowed-headers, default "").
	CORSAllowedHeaders string
	// CORSMaxAge is how long, in seconds, a browser may cache a preflight
	// answer (-cors-max-age, default 7200).
	CORSMaxAge int

	// DataDir is the disk store's directory, and that of forwarding
	// cursors and dead letters (-data-dir, default "./otlp-data").
	DataDir string
	// Storage is where data goes: disk, kafka or discard (-storage,
	// default "disk"). Sink, when set, replaces it.
	Storage string
	// Disk configures the disk store (-storage-*).
	Disk DiskConfig

	// MaxRecvMsgSize is the largest request in bytes, compressed or
	// decompressed (-grpc-max-recv-msg-size, default
	// grpcwire.DefaultMaxRecvMsgSize).
	MaxRecvMsgSize int
	// ValidateUTF8 refuses items with invalid UTF-8 in string fields
	// (-validate-utf8, default false).
	ValidateUTF8 bool
	// STEF serves STEF/gRPC (STEFDestination/Stream, stefreceiver) on the
	// OTLP ports (-stef, default true). A STEF stream's zstd decoder is
	// window-bounded and charged (stefreceiver.StateCostZstd); its
	// dictionaries are bounded by the stream's rotation
	// (stefreceiver.DefaultMaxStreamBytes of decoded data).
	STEF bool
	// OTelArrow serves OTel-Arrow in builds with the tag otelarrow
	// (otelarrow.go).
	OTelArrow OTelArrowConfig
	// Admission is the budget of request bytes (-admission-request-limit,
	// -admission-waiting-limit, -admission-max-wait, -max-streams; defaults
	// handler.DefaultAdmission*). Its StreamWindow is derived from Limits.
	Admission handler.AdmissionConfig
	// DedupKeys and DedupMaxAge bound the window of idempotency keys
	// (-dedup-window-keys, default handler.DefaultDedupKeys, 0 turns
	// it off; -dedup-window-age, default handler.DefaultDedupMaxAge):
	// docs/exactly-once.md.
	DedupKeys   int
	DedupMaxAge time.Duration
	// MemoryLimit is the Go heap's soft limit, bytes or like 512MiB
	// (-memory-limit, default "auto": MemoryLimitBytes). The Service does
	// not set it (it is the process's): the command does.
	MemoryLimit string
	// RetryDelay is the back-off told to clients (-retry-delay, default
	// handler.DefaultRetryDelay).
	RetryDelay time.Duration
	// BodyReadTimeout bounds the arrival of a request body
	// (-body-read-timeout, default handler.DefaultBodyReadTimeout).
	BodyReadTimeout time.Duration
	// ResponseWriteTimeout bounds how long an answer waits for the client
	// (-response-write-timeout, default handler.DefaultResponseWriteTimeout;
	// negative disables).
	ResponseWriteTimeout time.Duration
	// Stream configures export streams (-stream-max-in-flight,
	// -stream-max-age, -stream-max-requests; defaults handler.DefaultStream*).
	Stream handler.StreamConfig
	// ShutdownTimeout is how long the command gives Shutdown on SIGTERM
	// (-shutdown-timeout, default 15s); Shutdown itself ends with its ctx.
	ShutdownTimeout time.Duration
	// Limits are the HTTP/2 and HTTP/1.1 limits (-max-connections,
	// -max-connection-age, -max-connection-age-grace, -idle-timeout,
	// -read-header-timeout, -write-timeout, -max-header-bytes,
	// -http2-max-concurrent-streams, -http2-stream-window,
	// -http2-conn-window, -http2-max-frame-size; defaults
	// server.DefaultLimits, windows 0: derived, DerivedLimits).
	Limits server.Limits

	// TLSCert and TLSKey are the listeners' certificate and key, PEM files
	// reloaded when they change (-tls-cert, -tls-key, default "": h2c and
	// HTTP/1.1).
	TLSCert, TLSKey string
	// TLSClientCA are the CA certificates clients must present a
	// certificate signed by (-tls-client-ca, default "": no mTLS).
	TLSClientCA string
	// TLSMinVersion is 1.2 or 1.3 (-tls-min-version, default "1.2").
	TLSMinVersion string
	// AuthTokenFile is the file of bearer tokens, re-read when it changes
	// (-auth-token-file, default "": no authentication).
	AuthTokenFile string

	// Tenants configures tenancy (-tenant-*).
	Tenants TenantConfig
	// Kafka configures the Kafka sink of Storage "kafka" (-kafka-*), and
	// how the Kafka source connects.
	Kafka KafkaConfig
	// KafkaConsume configures the Kafka source (-kafka-consume*).
	KafkaConsume KafkaConsumeConfig
	// Forward configures forwarding from the disk log (-forward*).
	Forward ForwardConfig

	// AdminAddr is the operator's listener (-admin-addr, default
	// "localhost:8888"; empty: none): package admin.
	AdminAddr string
	// AdminPprof serves /debug/pprof/ on it (-admin-pprof, default false).
	AdminPprof bool
	// LogLevel is debug, info, warn or error (-log-level, default "info").
	LogLevel string
	// LogFormat is text or json (-log-format, default "text").
	LogFormat string
	// StatusSampleInterval is how often the status page samples the
	// metrics for its rates and charts (-status-sample-interval, default
	// admin.DefaultHistoryInterval: charts of 15 minutes).
	StatusSampleInterval time.Duration
	// SelfTelemetry pushes the receiver's own metrics and warnings over
	// OTLP (-self-telemetry-*; selftelemetry.go).
	SelfTelemetry SelfTelemetryConfig

	// Not flags.

	// Sink, if set, replaces the built-in storage (Storage is then
	// ignored): the Service writes every accepted request to it and closes
	// it at Shutdown (a Start that fails leaves it open: it is still the
	// caller's). Forwarding needs the disk log, so not with a Sink.
	Sink storage.Sink
	// Items, if set, replaces the built-in storage with an engine that
	// takes decoded items in the validation pass (storage.ItemSink; see
	// ingest.Config.Items); not with Sink, and not with forwarding, which
	// reads the disk log. The Service closes it at Shutdown, not after a
	// failed Start.
	Items storage.ItemSink
	// Logger receives the receiver's log; nil: NewLogger(os.Stderr,
	// LogFormat, LogLevel).
	Logger *slog.Logger
	// Metrics is the set every part registers its metrics in; nil: a new
	// set (Service.Metrics). It holds one Service's metrics: a Service
	// that ran needs a new set to run again (a failed Start leaves the
	// set as it found it).
	Metrics *metrics.Set
	// Version is shown on the status page and in the "serving" log line.
	Version string
	// Effective is the configuration as the command parsed it, secrets
	// hidden, for /config and the status page.
	Effective []admin.ConfigEntry
}

// DiskConfig configures the disk store (package disk).
type DiskConfig struct {
	// Sync is always, interval or none (-storage-sync, default "always").
	Sync string
	// SyncInterval is the fsync period of Sync interval
	// (-storage-sync-interval, default disk.DefaultSyncInterval).
	SyncInterval time.Duration
	// MaxBytes bounds all signals together, bytes or with a KiB/MiB/GiB/TiB
	// or KB/MB/GB/TB suffix (-storage-max-bytes, default "0": no bound).
	MaxBytes string
	// MaxAge deletes segments whose newest record is older
	// (-storage-max-age, default 0: no bound).
	MaxAge time.Duration
	// Compression of new segments: zstd or none (-storage-compression,
	// default "none").
	Compression string
	// MaxSegmentSize starts a new segment file, same units as MaxBytes
	// (-storage-max-segment-size, default disk.DefaultMaxSegmentSize).
	MaxSegmentSize string
}

// TenantConfig configures tenancy; it is off unless a source is
// configured: Header, FromCert, or tenants in the token file.
type TenantConfig struct {
	// Header is the request header that names the tenant
	// (-tenant-header, default "").
	Header string
	// FromCert is the verified client certificate's field that names the
	// tenant: cn, san-dns or ou (-tenant-from-cert, default "").
	FromCert string
	// Sources is the order in which sources are tried
	// (-tenant-sources, default "token,header,cert").
	Sources string
	// Default is the tenant of a request no source names
	// (-tenant-default, default otlp.DefaultTenant).
	Default string
	// Required refuses such a request instead (-tenant-required, default
	// false).
	Required bool
	// QuotaFile holds per-tenant quotas, re-read when it changes
	// (-tenant-quota-file, default "").
	QuotaFile string
}

// ForwardConfig configures forwarding from the disk log (package forward).
type ForwardConfig struct {
	// Destinations are the -forward NAME=URL flags, parsed by
	// forward.Parse (default none).
	Destinations []forward.Destination
	// DeadLetterMaxBytes bounds each destination's dead letters, same
	// units as DiskConfig.MaxBytes, never more than it when it is set
	// (-forward-dead-letter-max-bytes, default "1GiB"; "0": no bound of
	// its own).
	DeadLetterMaxBytes string
	// DeadLetterMaxAge (-forward-dead-letter-max-age, default
	// deadletter.DefaultMaxAge; 0: no bound).
	DeadLetterMaxAge time.Duration
}

// DefaultConfig returns the configuration of `otlp-lite serve` without
// flags.
func DefaultConfig() Config {
	c := Config{
		GRPCAddr:             "localhost:4317",
		HTTPAddr:             "localhost:4318",
		CORSMaxAge:           7200,
		UnixSocketMode:       "0660",
		ProxyProtocolTimeout: server.DefaultProxyHeaderTimeout,
		DataDir:              "./otlp-data",
		Storage:              "disk",
		MaxRecvMsgSize:       grpcwire.DefaultMaxRecvMsgSize,
		MemoryLimit:          "auto",
		RetryDelay:           handler.DefaultRetryDelay,
		BodyReadTimeout:      handler.DefaultBodyReadTimeout,
		ResponseWriteTimeout: handler.DefaultResponseWriteTimeout,
		ShutdownTimeout:      15 * time.Second,
		Limits:               server.DefaultLimits(),
		TLSMinVersion:        "1.2",
		AdminAddr:            "localhost:8888",
		LogLevel:             "info",
		LogFormat:            "text",
		Disk: DiskConfig{Sync: "always", SyncInterval: disk.DefaultSyncInterval, MaxBytes: "0", Compression: "none",
			MaxSegmentSize: strconv.Itoa(disk.DefaultMaxSegmentSize)},
		Tenants: TenantConfig{Sources: "token,header,cert", Default: otlp.DefaultTenant},
		Forward: ForwardConfig{DeadLetterMaxBytes: "1GiB", DeadLetterMaxAge: deadletter.DefaultMaxAge},
		Kafka:   defaultKafkaConfig(),
		STEF:    true,

		StatusSampleInterval: admin.DefaultHistoryInterval,
		SelfTelemetry:        SelfTelemetryConfig{Interval: DefaultSelfTelemetryInterval},
	}
	c.DedupKeys, c.DedupMaxAge = handler.DefaultDedupKeys, handler.DefaultDedupMaxAge
	c.OTelArrow = OTelArrowConfig{Enabled: OTelArrowBuilt, MemoryLimit: DefaultOTelArrowMemoryLimit}
	c.Admission = handler.AdmissionConfig{RequestLimit: handler.DefaultAdmissionRequestLimit,
		WaitingLimit: handler.DefaultAdmissionWaitingLimit, MaxWait: handler.DefaultAdmissionMaxWait}
	c.Stream = handler.StreamConfig{MaxInFlight: handler.DefaultStreamMaxInFlight, MaxAge: handler.DefaultStreamMaxAge,
		MaxRequests: handler.DefaultStreamMaxRequests}
	// The windows are derived (DerivedLimits) unless set.
	c.Limits.StreamWindow, c.Limits.ConnWindow = 0, 0
	c.KafkaConsume = defaultKafkaConsumeConfig()
	return c
}

// Validate checks every value, so that a mistake is one error naming its
// flag before anything starts, not an error log after the listeners
// opened. New calls it.
func (c Config) Validate() error {
	if _, err := c.level(); err != nil {
		return err
	}
	if c.LogFormat != "text" && c.LogFormat != "json" && c.LogFormat != "" {
		return fmt.Errorf("bad -log-format %q: want text or json", c.LogFormat)
	}
	if err := c.SelfTelemetry.validate(); err != nil {
		return err
	}
	if c.AdminPprof && !admin.PprofBuiltIn {
		return fmt.Errorf("-admin-pprof: this build has no profiler (built with -tags nopprof, as the small image is)")
	}
	if c.StatusSampleInterval < 0 {
		return fmt.Errorf("bad -status-sample-interval %v: want a positive duration", c.StatusSampleInterval)
	}
	if c.Sink != nil && c.Items != nil {
		return errors.New("cannot use both Sink and Items: the acknowledgement can wait for one store")
	}
	if c.Sink == nil && c.Items == nil {
		switch c.Storage {
		case "disk", "kafka", "discard":
		default:
			return fmt.Errorf("bad -storage %q: want disk, kafka or discard", c.Storage)
		}
	}
	if c.GRPCAddr == "" {
		return errors.New("bad -grpc-addr: must not be empty")
	}
	for name, addr := range map[string]string{"grpc-addr": c.GRPCAddr, "http-addr": c.HTTPAddr, "admin-addr": c.AdminAddr} {
		if addr == "" {
			continue
		}
		if err := server.CheckAddr(addr); err != nil {
			return fmt.Errorf("bad -%s %q: %v", name, addr, err)
		}
	}
	if _, err := c.unixSocketMode(); err != nil {
		return err
	}
	if _, err := c.proxyProtocol(); err != nil {
		return err
	}
	if _, err := c.Disk.Options(); err != nil {
		return err
	}
	if _, err := c.MemoryLimitBytes(); err != nil {
		return fmt.Errorf("bad -memory-limit: %w", err)
	}
	if err := c.OTelArrow.check(); err != nil {
		return err
	}
	if err := c.checkTLS(); err != nil {
		return err
	}
	if c.AuthTokenFile != "" {
		if _, err := handler.NewTokenFile(c.AuthTokenFile); err != nil {
			return fmt.Errorf("bad -auth-token-file: %w", err)
		}
	}
	if _, err := c.tenancy(); err != nil {
		return err
	}
	if c.CORSMaxAge < 0 {
		return fmt.Errorf("bad -cors-max-age %d: must not be negative", c.CORSMaxAge)
	}
	for _, o := range splitList(c.CORSAllowedOrigins) {
		if o != "*" && !strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://") {
			return fmt.Errorf("bad -cors-allowed-origins entry %q: want an origin such as https://app.example.com, https://*.example.com, or *", o)
		}
	}
	positive := []struct {
		name string
		v    int64
	}{
		{"grpc-max-recv-msg-size", int64(c.MaxRecvMsgSize)},
		{"admission-request-limit", c.Admission.RequestLimit},
		{"stream-max-in-flight", int64(c.Stream.MaxInFlight)},
		{"http2-max-concurrent-streams", int64(c.Limits.MaxConcurrentStreams)},
		{"max-header-bytes", int64(c.Limits.MaxHeaderBytes)},
	}
	for _, p := range positive {
		if p.v <= 0 {
			return fmt.Errorf("bad -%s %d: must be positive", p.name, p.v)
		}
	}
	nonNegative := []struct {
		name string
		v    int64
	}{
		{"admission-waiting-limit", c.Admission.WaitingLimit},
		{"admission-max-wait", int64(c.Admission.MaxWait)},
		{"dedup-window-keys", int64(c.DedupKeys)},
		{"dedup-window-age", int64(c.DedupMaxAge)},
		{"max-streams", int64(c.Admission.MaxStreams)},
		{"max-connections", int64(c.Limits.MaxConnections)},
		{"max-connection-age", int64(c.Limits.MaxConnectionAge)},
		{"max-connection-age-grace", int64(c.Limits.MaxConnectionAgeGrace)},
		{"idle-timeout", int64(c.Limits.IdleTimeout)},
		{"read-header-timeout", int64(c.Limits.ReadHeaderTimeout)},
		{"write-timeout", int64(c.Limits.WriteByteTimeout)},
		{"retry-delay", int64(c.RetryDelay)},
		{"body-read-timeout", int64(c.BodyReadTimeout)},
		{"shutdown-timeout", int64(c.ShutdownTimeout)},
		{"proxy-protocol-timeout", int64(c.ProxyProtocolTimeout)},
		{"http2-stream-window", int64(c.Limits.StreamWindow)},
		{"http2-conn-window", int64(c.Limits.ConnWindow)},
		{"http2-max-frame-size", int64(c.Limits.MaxFrameSize)},
	}
	for _, p := range nonNegative {
		if p.v < 0 {
			return fmt.Errorf("bad -%s: must not be negative", p.name)
		}
	}
	// RFC 9113 section 6.5.2: SETTINGS_MAX_FRAME_SIZE is between 2^14
	// and 2^24-1; 0 keeps the default.
	if f := c.Limits.MaxFrameSize; f != 0 && (f < 1<<14 || f > 1<<24-1) {
		return fmt.Errorf("bad -http2-max-frame-size %d: HTTP/2 allows 16384 to 16777215", f)
	}
	if err := c.Kafka.check(); err != nil {
		return fmt.Errorf("bad -kafka-* flags: %w", err)
	}
	if err := c.checkForward(); err != nil {
		return err
	}
	return c.checkKafkaConsume()
}

func (c Config) level() (slog.Level, error) {
	var l slog.Level
	if c.LogLevel == "" {
		return slog.LevelInfo, nil
	}
	if err := l.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return l, fmt.Errorf("bad -log-level %q: want debug, info, warn or error", c.LogLevel)
	}
	return l, nil
}

// storageKind is where data goes: "sink" for the caller's Sink, "items"
// for its ItemSink, else Storage.
func (c Config) storageKind() string {
	if c.Sink != nil {
		return "sink"
	}
	if c.Items != nil {
		return "items"
	}
	return c.Storage
}

// MemoryLimitBytes resolves MemoryLimit: what the receiver holds is
// bounded by admission (request bytes in flight and waiting), and each
// admitted request exists about twice (its buffers and its storage copy),
// so the heap needs about twice the admission limits plus a margin (48 MiB)
// for the runtime, connections and pools; with "auto", Service.Start then
// raises it by what the window of idempotency keys holds as it fills
// (FollowMemoryLimit), rather than by the window's bound up front, which
// would let the heap double when the window is empty. Without a limit, the
// garbage collector lets the heap reach twice the live data before
// collecting. 0 means no limit; an explicit GOMEMLIMIT wins over the flag.
func (c Config) MemoryLimitBytes() (int64, error) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0, nil
	}
	switch c.MemoryLimit {
	case "auto", "":
		return 2*(c.Admission.RequestLimit+max(c.Admission.WaitingLimit, 0)) + 48<<20, nil
	case "0", "off":
		return 0, nil
	}
	return ParseSize(c.MemoryLimit)
}

// DerivedLimits returns Limits with the limits whose flags say "derived"
// filled: the HTTP/2 windows left at 0, from the admission budget and the
// connection limit (server.WindowFor).
func (c Config) DerivedLimits() server.Limits {
	l := c.Limits
	w := server.WindowFor(c.Admission.RequestLimit, l.MaxConnections)
	if l.StreamWindow == 0 {
		l.StreamWindow = w
	}
	if l.ConnWindow == 0 {
		l.ConnWindow = w
	}
	return l
}

// admission is the handler's admission config: Admission, plus the HTTP/2
// stream window, which an export stream that waits leaves unread and which
// is charged to the waiting budget for the wait.
func (c Config) admission(limits server.Limits, self bool) handler.AdmissionConfig {
	a := c.Admission
	a.StreamWindow = int64(limits.StreamWindow)
	if self {
		a.Reserve = selfReserve // self-telemetry into our own pipeline
	}
	return a
}

// Options validates the disk settings and returns the disk store's options
// (package disk).
func (f DiskConfig) Options() (disk.Options, error) {
	var o disk.Options
	var err error
	if o.Sync, err = disk.ParseSyncPolicy(f.Sync); err != nil {
		return o, fmt.Errorf("bad -storage-sync: %w", err)
	}
	if f.SyncInterval <= 0 {
		return o, fmt.Errorf("bad -storage-sync-interval %v: must be positive", f.SyncInterval)
	}
	o.SyncInterval = f.SyncInterval
	if o.MaxBytes, err = ParseSize(f.MaxBytes); err != nil {
		return o, fmt.Errorf("bad -storage-max-bytes: %w", err)
	}
	if f.MaxAge < 0 {
		return o, fmt.Errorf("bad -storage-max-age %v: must not be negative", f.MaxAge)
	}
	o.MaxAge = f.MaxAge
	if o.Compression, err = disk.ParseCompression(f.Compression); err != nil {
		return o, fmt.Errorf("bad -storage-compression: %w", err)
	}
	if o.MaxSegmentSize, err = ParseSize(f.MaxSegmentSize); err != nil {
		return o, fmt.Errorf("bad -storage-max-segment-size: %w", err)
	}
	if o.MaxSegmentSize < 4096 {
		return o, fmt.Errorf("bad -storage-max-segment-size %d: must be at least 4096", o.MaxSegmentSize)
	}
	return o, nil
}

// ParseSize parses a byte count with an optional binary (KiB, MiB, GiB,
// TiB) or decimal (KB, MB, GB, TB) suffix.
func ParseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
	}
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("invalid size %q: want a non-negative number of bytes, optionally with a KiB/MiB/GiB/TiB or KB/MB/GB/TB suffix", s)
	}
	return n * mult, nil
}

// splitList splits a comma-separated value, dropping empty entries.
func splitList(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// unixSocketMode parses UnixSocketMode: octal permission bits.
func (c Config) unixSocketMode() (fs.FileMode, error) {
	m, err := strconv.ParseUint(c.UnixSocketMode, 8, 32)
	if err != nil || m > 0o777 || m == 0 {
		return 0, fmt.Errorf("bad -unix-socket-mode %q: want octal permission bits such as 0660", c.UnixSocketMode)
	}
	return fs.FileMode(m), nil
}

// listenConfig is how the listeners are opened.
func (c Config) listenConfig() server.ListenConfig {
	m, _ := c.unixSocketMode() // checked by Validate
	return server.ListenConfig{UnixSocketMode: m}
}

// proxyProtocol is the PROXY protocol configuration of the OTLP
// listeners.
func (c Config) proxyProtocol() (server.ProxyProtocol, error) {
	p, err := server.ParseTrustedProxies(c.ProxyProtocolTrustedCIDRs)
	if err != nil {
		return p, fmt.Errorf("bad -proxy-protocol-trusted-cidrs: %w", err)
	}
	p.HeaderTimeout = c.ProxyProtocolTimeout
	return p, nil
}

// dedup is the pipeline's window of idempotency keys: DedupKeys 0 turns
// it off.
func (c Config) dedup() handler.DedupConfig {
	if c.DedupKeys <= 0 {
		return handler.DedupConfig{Keys: -1}
	}
	return handler.DedupConfig{Keys: c.DedupKeys, MaxAge: c.DedupMaxAge}
}
