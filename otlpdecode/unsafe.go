package otlpdecode

import "unsafe"

// stringToBytes returns the bytes of s without copying; they must not be
// modified.
func stringToBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// bytesToString returns b as a string without copying; b must not be
// modified while the string is in use.
func bytesToString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
