//go:build race

package compression

// raceEnabled is set when testing with -race, where sync.Pool randomly drops
// items and allocation counts are meaningless.
const raceEnabled = true
