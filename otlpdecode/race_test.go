//go:build race

package otlpdecode

// raceEnabled thins the exhaustive truncation test under the race
// detector, which slows it tenfold without finding more: the package
// shares no memory between goroutines.
const raceEnabled = true
