// Package arrowreceiver is the OTel-Arrow transport: it serves
// opentelemetry.proto.experimental.arrow.v1.Arrow{Traces,Metrics,Logs}Service
// (bidirectional streams of BatchArrowRecords, answered by one BatchStatus
// per batch), the Collector's otelarrowexporter's way out, on the
// receiver's own gRPC (grpcwire) and net/http's HTTP/2, beside OTLP on the
// same ports.
//
// It is built only with the build tag otelarrow: the Arrow IPC decoder
// (github.com/apache/arrow-go) and otel-arrow's code
// (github.com/open-telemetry/otel-arrow/go) bring pdata, protobuf and
// grpc-go's generated types, which the default binary and the small image
// stay without. Without the tag this package is this comment only.
//
// Each batch's Arrow records are read by one Arrow IPC reader per payload
// type and schema id, which keep the stream's schemas and dictionaries
// between batches, as otel-arrow's record consumer (pkg/otel/arrow_record)
// does and with the same options, but for zstd-compressed bodies, which are
// decompressed first into memory from the stream's allocator (unzstd.go:
// one process-wide decoder, not arrow-go's decoder and goroutines per
// record batch). The records are then written as OTLP
// protobuf straight from their columns by our own encoders (enctraces.go,
// enclogs.go, encmetrics.go: attribute tables indexed by parent id, no
// pdata), which read every column as otel-arrow's conversion
// (pkg/otel/{traces,metrics,logs}/otlp) reads it and are tested field by
// field against it. The OTLP is handed to the one ingest pipeline
// (ingest.Pipeline.Export, transport ingest.OTelArrow). A batch is
// answered OK only once the pipeline stored it.
//
// What a stream can make us hold is bounded: one message
// (the pipeline's MaxRecvMsgSize, charged as it arrives), the Arrow
// allocator's bytes (Config.MemoryLimit, otel-arrow's memory_limit_mib,
// charged to the admission budget as they are allocated with
// ingest.Pipeline.HoldStreamState), the rows a batch may decode
// (Config.MaxBatchRows) and the OTLP it may decode to (MaxRecvMsgSize).
// arrow-go trusts what a message declares, so before it reads a message
// its framing, flatbuffer and zstd windows are checked (ipccheck.go), and
// before the conversion reads the records their arrays are (validate.go):
// what a stream declares costs at most what it sent, within its limit.
// Our encoders stop writing at MaxRecvMsgSize as they write (a dictionary
// value that many rows repeat cannot make more), and their indexes are
// proportional to the rows (an attribute table's parent ids index an
// array while they are dense, and are sorted when they are not).
package arrowreceiver
