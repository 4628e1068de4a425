package beet

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// UniqueKey is the beet's stable, non-secret identifier for read-only API
// keys, which never see the token (the token records events, so a wall
// display holding it could forge pings). Like Healthchecks' unique_key it
// grants nothing; unlike it, it is derived from the beet's account, ID and
// creation time rather than from the token, so it survives rotation and
// says nothing about any token, old or new. 40 hex characters.
func (b *Beet) UniqueKey() string {
	var buf [len("beet unique key") + 24]byte
	n := copy(buf[:], "beet unique key")
	binary.BigEndian.PutUint64(buf[n:], uint64(b.AccountID))
	binary.BigEndian.PutUint64(buf[n+8:], uint64(b.ID))
	binary.BigEndian.PutUint64(buf[n+16:], uint64(b.CreatedAt.UnixMicro())) // the stored precision
	sum := sha256.Sum256(buf[:])
	return hex.EncodeToString(sum[:20])
}
