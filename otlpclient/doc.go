// Package otlpclient sends OTLP export requests to a receiver, as a library
// and as the engine of `otlp-lite loadgen`.
//
// It speaks both modes of the OTLP proposal (OTEP 0035, "Client Modes"):
//
//   - UnaryExporter: the standard OTLP/gRPC Export calls of
//     TraceService, MetricsService, LogsService and ProfilesService
//     (v1development), so it works against any
//     OTLP receiver, the OpenTelemetry Collector included. Retries follow
//     OTLP v1.11 "Failures": UNAVAILABLE and RESOURCE_EXHAUSTED honour
//     google.rpc.RetryInfo, other retryable codes back off exponentially
//     with jitter.
//   - StreamExporter: otlplite.v1.StreamExporter (proto/otlplite/v1/stream.proto),
//     many requests pipelined on one bidirectional HTTP/2 stream, each with
//     an id that is never reused, acknowledged by the server in any order.
//     Unacknowledged requests are kept (the AckPending map) and resent when a
//     stream is rotated or broken, exactly as stream.proto prescribes; when
//     the server ends a stream because one message is over its size limit,
//     that request alone fails and the rest are resent.
//
// Exports may carry idempotency keys (idempotency.go, otlp.IdempotencyKeyHeader):
// WithIdempotencyKey names one export, Config.IdempotencyKeys gives every
// export a key of its own, and every retry of an export sends its key
// again, so that a receiver keeping a window of keys (otlp-lite) stores it
// once after a lost acknowledgement. A StreamExporter names itself once
// per stream (StreamConfig.ClientID) and each request by its id, which a
// resend keeps and SendID lets the caller choose.
//
// Both run over net/http's HTTP/2 client (h2c or TLS) with no grpc-go: the
// framing is the 5-byte gRPC length prefix and the messages are encoded with
// easyproto. Dial adds an artificial round-trip time to a connection without
// capping its throughput, to measure the modes at WAN latencies on one host.
package otlpclient
