package otlpdecode

import "unsafe"

// stringToBytes returns the bytes of s without copying; they must not be
// modified.
func stringToBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
