//go:build race

package main

// raceEnabled: under the race detector the test's own clients are several
// times slower, too slow to overload the server on two cores.
const raceEnabled = true
