package beet

import (
	"encoding/hex"
	"time"
)

// EventID identifies an event. It is assigned when the request arrives,
// before the event is stored, so a replayed write can be recognised.
type EventID [16]byte

// String formats the ID like a UUID.
func (id EventID) String() string {
	const hexdigits = "0123456789abcdef"
	var b [36]byte
	j := 0
	for i, c := range id {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b[j] = '-'
			j++
		}
		b[j], b[j+1] = hexdigits[c>>4], hexdigits[c&15]
		j += 2
	}
	return string(b[:])
}

// Event is one recorded ingestion request.
type Event struct {
	ID         EventID
	BeetID     int64
	ReceivedAt time.Time // server clock at receipt, UTC, microsecond precision
	Value      *float64  // from the optional POST body; never used by detection
	Method     string
	UserAgent  string // cut to MaxUserAgentLen
	// Kind is what the request reported; the zero kind is KindPing.
	Kind EventKind
	// ExitCode is the code of /{exit code} (0-255); nil for other paths.
	ExitCode *int
	// Duration is the run's length on an event that ended a run (a success
	// or failure after a start); set by the store (TrackRuns).
	Duration *time.Duration
	// Message is the text the request's body carried (at most
	// MaxMessageLen bytes): a job's output, a failure's reason.
	Message string
	// RID is the run ID a job sent with ?rid= (a UUID), pairing a start
	// with its end; "" when none. It travels to the commit (TrackRuns) and
	// through the spool; it is not stored with the event.
	RID string
	// Token, when set, is the token the event arrived with: the store keeps
	// the event for the beet that has this token when the event is
	// committed, so a rotation kills the old token at once on every
	// instance, and the request path needs no lookup. It is not stored.
	Token string
	// Addr is the client address the event came from. Like Token it travels
	// with the event to its commit (and through the spool), so that a hit
	// with a token no beet has by then can be noted with its address. It is
	// not stored.
	Addr string
	// Stale is set by EventStore.AddEvents on an event it dropped because
	// its beet no longer has its Token (a rotation), so the hit can still
	// be counted on the old token. It is not stored.
	Stale bool
}

// MaxUserAgentLen is how much of a User-Agent an event keeps.
const MaxUserAgentLen = 200

// EventKind says what an ingestion request reported: the plain endpoint
// pings, and a job can also say that it started, that it failed, or log a
// line ({token}/start, /fail, /log, /{exit code}).
type EventKind string

const (
	KindPing  EventKind = "ping"  // the plain endpoint or exit code 0: it happened, the job succeeded
	KindStart EventKind = "start" // a run began; its end (ping or fail) gets the run's duration
	KindFail  EventKind = "fail"  // /fail or a non-zero exit code: the beet goes down
	KindLog   EventKind = "log"   // a message; never changes state
)

// Normal returns k, with the zero kind as KindPing.
func (k EventKind) Normal() EventKind {
	if k == "" {
		return KindPing
	}
	return k
}

// Counts reports whether events of kind k count toward a beet's rhythm:
// pings and failures are runs that happened; starts and logs are not.
func (k EventKind) Counts() bool { return k == "" || k == KindPing || k == KindFail }

// MaxExitCode is the largest exit code /{exit code} takes.
const MaxExitCode = 255

// MaxMessageLen bounds the message a body carries, in bytes: the
// ingestion body limit, announced in every answer's Ping-Body-Limit (as
// Healthchecks, whose default it is). A longer body is kept cut to it.
const MaxMessageLen = 10000

// EventFilter selects a beet's events, newest first (by received_at, then
// ID). Since is inclusive and Until exclusive, so a client pages back by
// passing the oldest received_at it has seen as the next Until, and that
// event's ID as BeforeID: events of that same microsecond whose ID sorts
// before it come next, where Until alone would skip them.
type EventFilter struct {
	BeetID   int64
	Since    *time.Time
	Until    *time.Time
	BeforeID *EventID // with Until only
	Limit    int
}

// ParseEventID reads an event ID as String writes it (any case).
func ParseEventID(s string) (EventID, bool) {
	var id EventID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return id, false
	}
	_, err := hex.Decode(id[:], []byte(s[0:8]+s[9:13]+s[14:18]+s[19:23]+s[24:]))
	return id, err == nil
}
