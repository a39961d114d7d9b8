module github.com/otlp-lite/otlp-lite

go 1.26.8

require (
	github.com/VictoriaMetrics/easyproto v1.1.3
	github.com/VictoriaMetrics/metrics v1.44.0
	github.com/klauspost/compress v1.20.3
	github.com/pierrec/lz4/v4 v4.1.33
	github.com/splunk/stef/go/otel v0.1.1
	github.com/splunk/stef/go/pkg v0.1.1
	github.com/twmb/franz-go v1.22.2
	github.com/twmb/franz-go/pkg/kmsg v1.15.0
	golang.org/x/net v0.62.0
)

require (
	github.com/valyala/fastrand v1.1.0 // indirect
	github.com/valyala/histogram v1.2.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	modernc.org/b/v2 v2.1.10 // indirect
)
