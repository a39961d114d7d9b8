//go:build race

package pbtest

// RaceEnabled thins the exhaustive truncation tests under the race
// detector, which slows them tenfold without finding more: the decoders
// share no memory between goroutines.
const RaceEnabled = true
