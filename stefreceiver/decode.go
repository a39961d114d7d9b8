package stefreceiver

import (
	"io"

	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"
)

// DecodeMetrics decodes a whole STEF metrics byte stream (its header and
// frames, as a file or one gRPC stream's stef_bytes carry it) into one
// ExportMetricsServiceRequest appended to dst, at most maxBytes of it; it
// returns the request and how many records it read. It is the stream's
// decoder without the stream, for tools and the fuzz target.
func DecodeMetrics(dst []byte, src io.Reader, maxBytes int) ([]byte, uint64, error) {
	rd, err := otelstef.NewMetricsReader(src)
	if err != nil {
		return dst, 0, err
	}
	var b metricsBuilder
	b.reset()
	b.out = dst
	for len(b.out) < maxBytes {
		if err := rd.Read(pkg.ReadOptions{}); err == io.EOF {
			break
		} else if err != nil {
			return b.finish(), rd.RecordCount(), err
		}
		if err := b.add(&rd.Record); err != nil {
			return b.finish(), rd.RecordCount(), err
		}
	}
	return b.finish(), rd.RecordCount(), nil
}
