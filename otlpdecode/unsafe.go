package otlpdecode

import "unsafe"

// bytesToString returns a string aliasing b, as easyproto's String does, so
// that views do not copy.
func bytesToString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// stringToBytes returns the bytes of s without copying; they must not be
// modified.
func stringToBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
