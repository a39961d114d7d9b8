package interop

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/gzip"

	"github.com/otlp-lite/otlp-lite/storage"
)

// grpc-go ships only gzip; the other grpc-encodings the receiver accepts
// are registered here the way common clients implement them: zstd frames,
// the snappy framing format (what gRPC snappy compressors such as
// mostynb/go-grpc-compression, used by the collector, send) and zlib for
// deflate (RFC 1950, HTTP's "deflate").
func init() {
	encoding.RegisterCompressor(compressor{name: "zstd",
		newWriter: func(w io.Writer) (io.WriteCloser, error) { return zstd.NewWriter(w) },
		newReader: func(r io.Reader) (io.Reader, error) { return zstd.NewReader(r) },
	})
	encoding.RegisterCompressor(compressor{name: "snappy",
		newWriter: func(w io.Writer) (io.WriteCloser, error) { return s2.NewWriter(w, s2.WriterSnappyCompat()), nil },
		newReader: func(r io.Reader) (io.Reader, error) { return s2.NewReader(r), nil },
	})
	encoding.RegisterCompressor(compressor{name: "deflate",
		newWriter: func(w io.Writer) (io.WriteCloser, error) { return zlib.NewWriter(w), nil },
		newReader: func(r io.Reader) (io.Reader, error) { return zlib.NewReader(r) },
	})
}

// compressor adapts a stream codec to grpc-go's encoding.Compressor.
type compressor struct {
	name      string
	newWriter func(io.Writer) (io.WriteCloser, error)
	newReader func(io.Reader) (io.Reader, error)
}

func (c compressor) Name() string                                 { return c.name }
func (c compressor) Compress(w io.Writer) (io.WriteCloser, error) { return c.newWriter(w) }
func (c compressor) Decompress(r io.Reader) (io.Reader, error)    { return c.newReader(r) }

// TestCompression sends the same kind of request with every grpc-encoding
// the receiver advertises and checks each is acknowledged and stored exactly
// as sent (decompressed).
func TestCompression(t *testing.T) {
	dataDir := t.TempDir()
	srv := startServer(t, dataDir)
	capt := newCapture()
	client := coltracepb.NewTraceServiceClient(srv.dial(t, capt.dialOptions()...))

	codecs := []string{"identity", gzip.Name, "zstd", "snappy", "deflate"}
	for i, name := range codecs {
		// Compressible, multi-block payload so that every codec emits more
		// than one block/frame.
		req := traceRequest(testSpan("codec-"+name, byte(i), kv("codec", strV(name)), kv("pad", strV(strings.Repeat(fmt.Sprintf("%s-%d;", name, i), 40000)))))
		var opts []grpc.CallOption
		if name != "identity" {
			opts = append(opts, grpc.UseCompressor(name))
		}
		if _, err := client.Export(callCtx(t), req, opts...); err != nil {
			t.Errorf("Export with grpc-encoding %s: %v", name, err)
		}
	}
	srv.stop()
	if n := capt.compressions["zstd"] + capt.compressions["snappy"] + capt.compressions["deflate"] + capt.compressions[gzip.Name]; n != len(codecs)-1 {
		t.Errorf("only %d requests went out compressed: %s", n, capt.summary())
	}
	stored := scanStore(t, dataDir, storage.Traces, func() *coltracepb.ExportTraceServiceRequest { return new(coltracepb.ExportTraceServiceRequest) })
	matchMessages(t, "compressed traces", capt.traces, stored)
}
