//go:build race

package bench

// raceEnabled is set when testing with -race, where sync.Pool randomly drops
// items (otlpjson keeps its decoder state in one) and allocation counts are
// meaningless.
const raceEnabled = true
