//go:build !race

package otlpdecode

const raceEnabled = false
