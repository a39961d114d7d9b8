module github.com/otlp-lite/otlp-lite/bench

go 1.26.8

replace github.com/otlp-lite/otlp-lite => ../

require (
	github.com/otlp-lite/otlp-lite v0.0.0-00010101000000-000000000000
	go.opentelemetry.io/collector/pdata v1.70.0
	google.golang.org/grpc v1.85.0
)

require (
	github.com/VictoriaMetrics/easyproto v1.1.3 // indirect
	github.com/hashicorp/go-version v1.9.0 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.3-0.20250322232337-35a7c28c31ee // indirect
	go.opentelemetry.io/collector/featuregate v1.70.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260817212433-ac3dfec99bb1 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
