package stefreceiver

import (
	"io"

	"github.com/splunk/stef/go/otel/otelstef"
	"github.com/splunk/stef/go/pkg"
)

// DecodeMetrics decodes a whole STEF metrics byte stream (its header and
// frames, as a file or one gRPC stream's stef_bytes carry it) into one
// ExportMetricsServiceRequest appended to dst, stopping once it is
// maxBytes or more (a record writing more than maxBytes on its own is an
// error); it returns the request and how many records it read.
// It is the stream's decoder without the stream, for tools and the fuzz
// targets.
func DecodeMetrics(dst []byte, src io.Reader, maxBytes int) ([]byte, uint64, error) {
	u := newUnzstd(src)
	defer u.close()
	rd, err := otelstef.NewMetricsReader(u)
	if err != nil {
		return dst, 0, err
	}
	return decodeAll(rd, &metricsBuilder{rec: &rd.Record, maxRecord: maxBytes}, dst, maxBytes)
}

// DecodeSpans is DecodeMetrics for a STEF spans stream: one
// ExportTraceServiceRequest.
func DecodeSpans(dst []byte, src io.Reader, maxBytes int) ([]byte, uint64, error) {
	u := newUnzstd(src)
	defer u.close()
	rd, err := otelstef.NewSpansReader(u)
	if err != nil {
		return dst, 0, err
	}
	return decodeAll(rd, &spansBuilder{rec: &rd.Record, maxRecord: maxBytes}, dst, maxBytes)
}

func decodeAll(rd recordReader, b builder, dst []byte, maxBytes int) ([]byte, uint64, error) {
	b.reset(dst)
	for b.size() < maxBytes {
		if err := rd.Read(pkg.ReadOptions{}); err == io.EOF {
			break
		} else if err != nil {
			return b.finish(), rd.RecordCount(), err
		}
		if err := b.add(); err != nil {
			return b.finish(), rd.RecordCount(), err
		}
	}
	return b.finish(), rd.RecordCount(), nil
}
