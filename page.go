package beet

// Limits on pages of results.
const (
	DefaultPageLimit = 100
	MaxPageLimit     = 1000
)
