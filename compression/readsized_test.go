package compression

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// A body read with its declared size leaves a buffer of that size, where
// ReadAll's doubling leaves up to twice it; a pooled buffer with room for
// it does not grow to find the end; and the claim never makes the read
// allocate more than ReadAll would, nor stops a longer body from being
// read whole (within the limit).
func TestReadAllSized(t *testing.T) {
	readers := map[string]func([]byte) io.Reader{
		"eof after the data": func(b []byte) io.Reader { return bytes.NewReader(b) },
		"eof with the data":  func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) },
		"short reads":        func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) },
	}
	for name, reader := range readers {
		for _, n := range []int{1, 4000, 100 << 10, 129 << 10, 243076, 1 << 20} {
			body := bytes.Repeat([]byte{7}, n)
			var charged int
			got, err := ReadAllSized(nil, reader(body), 64<<20, n, func(k int) error { charged += k; return nil })
			if err != nil || !bytes.Equal(got, body) || charged != n {
				t.Fatalf("%s, %d bytes: got %d bytes, charged %d, %v", name, n, len(got), charged, err)
			}
			if cap(got) != n {
				t.Errorf("%s, %d bytes: buffer of %d bytes, want %d", name, n, cap(got), n)
			}
			// A pooled buffer a little larger than the body: no growth.
			pooled := make([]byte, 0, n+1000)
			if got, err := ReadAllSized(pooled, reader(body), 64<<20, n, nil); err != nil || cap(got) != cap(pooled) {
				t.Errorf("%s, %d bytes into a pooled %d: buffer of %d bytes, %v", name, n, cap(pooled), cap(got), err)
			}
		}
	}
	// A claim larger than what is sent: the buffer follows what arrived,
	// as ReadAll's does.
	body := bytes.Repeat([]byte{7}, 10<<10)
	plain, _ := ReadAll(nil, bytes.NewReader(body), 64<<20, nil)
	claimed, err := ReadAllSized(nil, bytes.NewReader(body), 64<<20, 60<<20, nil)
	if err != nil || !bytes.Equal(claimed, body) || cap(claimed) > cap(plain) {
		t.Fatalf("a 60 MiB claim over 10 KiB: buffer of %d bytes (ReadAll's: %d), %v", cap(claimed), cap(plain), err)
	}
	// A body longer than its claim is read whole, and the limit holds.
	long := bytes.Repeat([]byte{7}, 300<<10)
	if got, err := ReadAllSized(nil, bytes.NewReader(long), 64<<20, 100<<10, nil); err != nil || !bytes.Equal(got, long) {
		t.Fatalf("300 KiB claiming 100 KiB: got %d bytes, %v", len(got), err)
	}
	if _, err := ReadAllSized(nil, bytes.NewReader(long), 200<<10, 100<<10, nil); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("300 KiB claiming 100 KiB over a 200 KiB limit: %v, want ErrTooLarge", err)
	}
	// A charge refusal at the probe byte stops the read.
	refuse := errors.New("no room")
	if _, err := ReadAllSized(nil, bytes.NewReader(long), 64<<20, 100<<10, func(k int) error {
		return refuse
	}); !errors.Is(err, refuse) {
		t.Fatalf("a refused charge: %v", err)
	}
}
