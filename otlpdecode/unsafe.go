package otlpdecode

import "unsafe"

// bytesToString returns a string aliasing b, as easyproto's String does, so
// that views do not copy.
func bytesToString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
