//go:build !race

package compression

const raceEnabled = false
