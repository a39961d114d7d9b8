//go:build !race

package otlpjson

const raceEnabled = false
