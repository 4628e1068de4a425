package beet

import (
	"context"
	"time"
)

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

// TrackRuns applies a group of b's events, in time order, to b.Runs, as
// Healthchecks does:
//
//   - a start opens the watched run (a second start replaces the first:
//     the job was restarted); with a run ID it is also kept by that ID;
//   - an end (a ping or a failure) with a run ID gets the duration from
//     the start with the same ID; it ends the watched run if that run has
//     the same ID, or if it is a failure;
//   - an end without a run ID ends the watched run, and gets its duration
//     when that run had no run ID either.
//
// Ending sets the event's Duration. It returns the group's signals for
// detection: nil when the group held no start, failure or exit code and
// ended no run, which is every group of a beet that only pings.
func TrackRuns(b *Beet, events []*Event) []Signal {
	need := b.Runs.Open()
	for _, e := range events {
		if e.Kind.Normal() != KindPing || e.ExitCode != nil {
			need = true
			break
		}
	}
	if !need {
		return nil
	}
	var out []Signal
	for _, e := range events {
		k := e.Kind.Normal()
		switch k {
		case KindLog:
			continue
		case KindStart:
			t := e.ReceivedAt
			b.Runs.StartedAt, b.Runs.StartedRID = &t, e.RID
			if e.RID != "" {
				b.Runs.startByRID(e.RID, t)
			}
		default:
			b.Runs.end(e, k)
		}
		out = append(out, Signal{At: e.ReceivedAt, Kind: k, ExitCode: e.ExitCode, Duration: e.Duration})
	}
	return out
}
