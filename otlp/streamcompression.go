package otlp

import "strings"

// Stateful stream compression (docs/streaming.md, "Stateful compression"):
// a client of StreamService offers it in its request headers,
//
//	otlplite-stream-compression: zstd
//
// and a server that accepts answers in its response headers with the
// largest window the client's encoder may use,
//
//	otlplite-stream-compression: zstd; window=1048576
//
// after which every message the client sends on that stream is a
// compression stream message (compression.StreamEncoder), with its
// compressed flag 0. A server that does not answer (an older one, or one
// without room for the decoder) gets messages as before, compressed
// alone per grpc-encoding. Responses are not affected.
const (
	StreamCompressionHeader = "Otlplite-Stream-Compression"
	StreamZstd              = "zstd"
)

// OffersStreamZstd reports whether a request's StreamCompressionHeader
// value offers zstd: a comma-separated list of codings, each possibly with
// ";" parameters.
func OffersStreamZstd(v string) bool {
	for c := range strings.SplitSeq(v, ",") {
		name, _, _ := strings.Cut(c, ";")
		if strings.EqualFold(strings.TrimSpace(name), StreamZstd) {
			return true
		}
	}
	return false
}

// AcceptedStreamZstd parses a response's StreamCompressionHeader value: the
// window the client may use when the server accepted zstd, 0 otherwise.
func AcceptedStreamZstd(v string) int {
	name, params, _ := strings.Cut(v, ";")
	if !strings.EqualFold(strings.TrimSpace(name), StreamZstd) {
		return 0
	}
	for p := range strings.SplitSeq(params, ";") {
		k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || !strings.EqualFold(k, "window") {
			continue
		}
		n := 0
		for _, c := range val {
			if c < '0' || c > '9' || n > 1<<30 {
				return 0
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	return 0
}

// StreamColumns, a parameter of the zstd coding in the offer and in the
// answer ("zstd; columns", "zstd; window=1048576; columns"), offers and
// accepts the columnar transform (otlpcolumns) under the stream's zstd:
// the zstd bytes of every stream message then carry the otlpcolumns
// encoding of the envelope. A server that does not know it accepts zstd
// alone, and its answer without the parameter tells the client so.
const StreamColumns = "columns"

// OffersStreamColumns reports whether a request's StreamCompressionHeader
// value offers zstd with the columns parameter.
func OffersStreamColumns(v string) bool {
	for c := range strings.SplitSeq(v, ",") {
		if zstdWithColumns(c) {
			return true
		}
	}
	return false
}

// AcceptedStreamColumns reports whether a response's
// StreamCompressionHeader value accepts zstd with the columns parameter.
func AcceptedStreamColumns(v string) bool { return zstdWithColumns(v) }

func zstdWithColumns(c string) bool {
	name, params, _ := strings.Cut(c, ";")
	if !strings.EqualFold(strings.TrimSpace(name), StreamZstd) {
		return false
	}
	for p := range strings.SplitSeq(params, ";") {
		if strings.EqualFold(strings.TrimSpace(p), StreamColumns) {
			return true
		}
	}
	return false
}
