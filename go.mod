module github.com/otlp-lite/otlp-lite

go 1.26.8

require (
	github.com/VictoriaMetrics/easyproto v1.1.3
	github.com/klauspost/compress v1.20.3
)
