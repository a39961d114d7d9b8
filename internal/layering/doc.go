// Package layering holds the test that keeps otlp-lite's imports flowing
// one way: shared protocol facts at the bottom, then codecs and storage
// contracts, the wire and the sinks, the transports, then clients and
// forwarding, with package main on top (see layering_test.go, which writes
// down what each package may import, as Go's go/build/deps_test.go does).
// It has no code of its own.
package layering
