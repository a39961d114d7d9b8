//go:build !race

package pbtest

const RaceEnabled = false
