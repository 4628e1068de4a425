package beet

import "time"

// UnknownToken is a recent ingestion request whose token matched no beet,
// as an instance remembers it (in memory, bounded): never the token, only
// its shape and a redacted prefix.
type UnknownToken struct {
	Prefix    string // beet.Redact of what was sent
	Shape     string // what is wrong with it: "wrong length (12 characters, want 31)", "no beet has it", …
	Addr      string // the last request's client address
	UserAgent string // the last request's
	Count     int64
	First     time.Time
	Last      time.Time
	// BeetID is the beet the token was probably meant for, or 0: the beet
	// whose old token it is (Rotated), or whose live token it misses by a
	// typo (a character or two). Which beet it is belongs to that beet's
	// account alone; the live token is never shown for it.
	BeetID  int64
	Rotated bool
}
