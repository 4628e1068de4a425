//go:build race

package testalloc

// raceEnabled: the race detector allocates on its own and makes sync.Pool
// drop items at random, so counts taken under it are not the program's.
const raceEnabled = true
