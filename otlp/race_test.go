//go:build race

package otlp

// raceEnabled: the race detector drops sync.Pool items at random, so pooled
// encoders allocate now and then.
const raceEnabled = true
