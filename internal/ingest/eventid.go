package ingest

import (
	"crypto/rand"
	"encoding/binary"
	"time"

	"github.com/beethq/beet"
)

// newEventID returns a UUIDv7 for an event received at t: 48 bits of Unix
// milliseconds, then random bits. Time order keeps the primary key index
// append-mostly; the 74 random bits keep IDs unique across instances.
func newEventID(t time.Time) beet.EventID {
	var id beet.EventID
	binary.BigEndian.PutUint64(id[0:8], uint64(t.UnixMilli())<<16)
	rand.Read(id[6:])
	id[6] = id[6]&0x0f | 0x70 // version 7
	id[8] = id[8]&0x3f | 0x80 // RFC 4122 variant
	return id
}
