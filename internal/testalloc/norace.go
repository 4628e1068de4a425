//go:build !race

package testalloc

const raceEnabled = false
