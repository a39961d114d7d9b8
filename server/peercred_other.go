//go:build !linux

package server

import "net"

// peerCred returns "" where SO_PEERCRED is not available.
func peerCred(*net.UnixConn) string { return "" }
