package beet

import (
	"context"
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

// Limits on pages of results.
const (
	DefaultPageLimit = 100
	MaxPageLimit     = 1000
)

// EventFilter selects a beet's events, newest first. Since is inclusive and
// Until exclusive, so a client pages back by passing the oldest received_at
// it has seen as the next Until.
type EventFilter struct {
	BeetID int64
	Since  *time.Time
	Until  *time.Time
	Limit  int
}

// EventSpan is what one stored group of events holds for one beet.
type EventSpan struct {
	// First, Last and Count cover the events that count toward the beet's
	// rhythm (EventKind.Counts): starts and logs do not. Count is 0 for a
	// group of only starts and logs.
	First, Last time.Time // earliest and latest receipt time
	Count       int
	// Signals are the group's run starts and ends in time order (see
	// TrackRuns); nil for a group of plain pings that ends no run.
	Signals []Signal
	// OpenRun is when the run open before the group started (nil if none
	// was): deadlines that passed before the group are judged with it.
	OpenRun *time.Time
	// Maintenance says the events (or the beet's previous one) fell in a
	// maintenance window: they move the beet's state as usual, but the
	// learned model does not learn from the hours they close.
	Maintenance bool
}

// Observer applies a beet's newly stored events to its detection state. It
// is called inside the transaction that stores them, with the beet as it
// stands there (locked against concurrent changes), and changes b's Status,
// StatusReason, StatusSince, DueAt, Model and LastEventAt in place; it
// returns the flips that happened, in time order. It does no I/O: it runs
// while the commit holds the writer. It keeps no reference to b (the store
// keeps b for its next commit).
type Observer func(b *Beet, span EventSpan) []Flip

// EventStore keeps events.
type EventStore interface {
	// AddEvents stores events in one transaction and moves each beet's
	// last_event_at forward. Events whose ID is already stored are skipped,
	// so replaying a batch is harmless. Events whose beet is gone, or whose
	// Token is no longer the beet's, are dropped without failing the batch
	// (the latter marked Stale).
	// so replaying a batch is harmless. An event with a Token belongs to the
	// beet that has that token at commit (a BeetID, if set, must agree);
	// one without, to the beet of its BeetID. Events whose beet is gone, or
	// whose Token is no beet's, are dropped without failing the batch.
	// AddEvents sets each event's BeetID to its beet's, or to 0 if dropped.
	// If observe is not nil, it is applied to every beet that gets events,
	// and what it changes and the flips it returns are stored in the same
	// transaction: detection costs ingestion no commit of its own, and a
	// deadline is never moved by events that did not commit.
	AddEvents(ctx context.Context, events []Event, observe Observer) error
	FindEvents(ctx context.Context, f EventFilter) ([]*Event, error)
	// BeetsWithEventsBefore returns, in ID order after afterID, up to limit
	// IDs of beets of accounts on plan p that hold events older than cutoff.
	BeetsWithEventsBefore(ctx context.Context, p Plan, cutoff time.Time, afterID int64, limit int) ([]int64, error)
	// DeleteEventsBefore deletes up to limit of the beet's events older than
	// cutoff in one short transaction and returns how many it deleted.
	DeleteEventsBefore(ctx context.Context, beetID int64, cutoff time.Time, limit int) (int64, error)
	// CountEventsBefore counts the beet's events older than cutoff.
	CountEventsBefore(ctx context.Context, beetID int64, cutoff time.Time) (int64, error)
	// DeleteExpiredEvents deletes, in one short transaction, events of
	// accounts on plan p older than cutoff, scanning by time from where the
	// plan's previous call stopped and reading about limit events at most,
	// whatever their plan. done says no older event is left to scan (or
	// another instance is on it). Calls until done delete every event of
	// the plan's accounts older than cutoff, including those of accounts
	// that moved to p since, at a cost that follows the events scanned, not
	// the number of beets.
	DeleteExpiredEvents(ctx context.Context, p Plan, cutoff time.Time, limit int) (deleted int64, done bool, err error)
	// CountExpiredEvents counts what calls of DeleteExpiredEvents up to
	// cutoff would delete.
	CountExpiredEvents(ctx context.Context, p Plan, cutoff time.Time) (int64, error)
	// DropEventsBefore removes events older than cutoff by whole storage
	// units (PostgreSQL's monthly partitions that end by cutoff) and
	// returns how many it removed; a store without them returns 0.
	DropEventsBefore(ctx context.Context, cutoff time.Time) (int, error)
}
