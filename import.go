package beet

import "context"

// ImportStore remembers the beets imported from another service (beet
// import healthchecks), by a key of their origin, so that an import run
// again creates no duplicates.
type ImportStore interface {
	// CreateImportedBeet creates b with its tags and notes that the
	// account imported it as sourceKey, in one transaction. b's status,
	// reason, last event and deadline are stored as given, with flips
	// (the state it was imported in: BeetID is set, and their alerts are
	// written as any flip's); the last flip's At is its StatusSince. A
	// source key the account already imported, or a taken token, is
	// ECONFLICT (field source_key or token).
	CreateImportedBeet(ctx context.Context, b *Beet, tags []string, sourceKey string, flips []Flip) error
	// FindImportedBeet returns the ID of the account's beet imported as
	// sourceKey, or an ENOTFOUND error.
	FindImportedBeet(ctx context.Context, accountID int64, sourceKey string) (int64, error)
}
