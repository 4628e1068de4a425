package beet

import (
	"context"
	"slices"
	"time"
)

// DeliveryStatus is where a delivery stands.
type DeliveryStatus string

const (
	DeliveryPending    DeliveryStatus = "pending"    // waiting for its (next) attempt
	DeliveryDelivered  DeliveryStatus = "delivered"  // the receiver accepted it
	DeliveryFailed     DeliveryStatus = "failed"     // refused for good, or retried for 24 hours
	DeliverySuppressed DeliveryStatus = "suppressed" // not sent: maintenance or flapping
)

// Delivery events: what a message is about (the webhook's "event").
const (
	EventDown      = "beet.down"
	EventAnomalous = "beet.anomalous"
	EventUp        = "beet.up"
	EventTest      = "test"
	// EventPaused: a person paused a beet that was down or anomalous. The
	// message ends the incident (PagerDuty resolve) and says alerts are
	// off until the beet is resumed. Written with the pause flip.
	EventPaused = "beet.paused"
	// EventSettled: a beet reported flapping has not flipped for an hour.
	// It is sent as the event of the beet's state (beet.up, beet.down,
	// beet.anomalous or beet.paused) with "settled" set.
	EventSettled = "beet.settled"
)

// Delivery is one message to one channel: a row of the outbox. Flips
// create them in the transaction that records the flip; workers claim and
// send them.
type Delivery struct {
	ID        int64
	ChannelID int64
	BeetID    int64 // 0 for a test message
	FlipID    int64 // 0 for a test message
	// IncidentFlipID is the flip that opened the incident this message
	// belongs to; a recovery carries the flip it closes.
	IncidentFlipID int64
	Event          string
	// Reminder numbers a reminder of the incident (0: the flip itself).
	Reminder int
	// Flapping marks the one message that says the beet is flapping.
	Flapping  bool
	Status    DeliveryStatus
	Attempts  int
	NextAt    time.Time
	CreatedAt time.Time
	// FirstAt is when the delivery was first claimed (nil before): retries
	// give up a day after it.
	FirstAt *time.Time
	// LastAt, Latency and Error describe the last attempt.
	LastAt  *time.Time
	Latency time.Duration
	Error   string
}

// IdempotencyKey is stable for the life of a delivery: every retry of one
// message carries the same key, so receivers can drop duplicates.
func (d *Delivery) IdempotencyKey() string {
	return "beet-delivery-" + itoa(d.ID)
}

// IncidentKey names the incident a message belongs to, such as a
// PagerDuty dedup_key: the alert and its recovery share it.
func (d *Delivery) IncidentKey() string {
	if d.IncidentFlipID == 0 {
		return "beet-test-" + itoa(d.ID)
	}
	return "beet-" + itoa(d.BeetID) + "-incident-" + itoa(d.IncidentFlipID)
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// NotifyEvent says which message a flip sends, or "" for none. Only flips
// that matter to people are sent: into down or anomalous, and recovery from
// them back to up. First events, learning done and a person's pause or
// resume are not sent.
func NotifyEvent(f *Flip) string {
	if slices.Contains(SilentFlipKinds, f.Kind) {
		return ""
	}
	switch {
	case f.To == StatusDown && f.From != StatusDown:
		return EventDown
	case f.To == StatusAnomalous && f.From != StatusAnomalous:
		return EventAnomalous
	case (f.To == StatusUp || f.To == StatusLearning) && f.From.InTrouble():
		return EventUp // a learning beet's alarm ends back in learning
	}
	return ""
}

// SilentFlipKinds never send a message, whatever the statuses: news to
// nobody, or a person's own doing.
var SilentFlipKinds = []FlipKind{FlipManual, FlipFirst, FlipLearned}

// DeliveryResult is the outcome of one attempt, as a worker records it.
type DeliveryResult struct {
	ID       int64
	Attempts int // the attempt this result is for (a fencing token)
	At       time.Time
	Latency  time.Duration
	Status   DeliveryStatus
	Error    string
	// NextAt is when to try again, for a pending status.
	NextAt time.Time
	// ChannelFailing marks the channel as failing (a permanent refusal);
	// a delivered status clears the mark.
	ChannelFailing bool
}

// DeliveryStore is the outbox.
type DeliveryStore interface {
	// CreateDelivery inserts a delivery that no flip made (a test message).
	CreateDelivery(ctx context.Context, d *Delivery) error
	// ClaimDeliveries takes up to limit pending deliveries due at now: it
	// counts an attempt on each and moves its NextAt to now+lease, in one
	// compare and set, so no other worker takes them meanwhile. A worker
	// that dies leaves them to be claimed again when the lease ends.
	ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*Delivery, error)
	// ClaimDelivery claims one pending delivery by ID (test messages are
	// sent at once); ECONFLICT if it is not pending.
	ClaimDelivery(ctx context.Context, id int64, now time.Time, lease time.Duration) (*Delivery, error)
	// RecordDelivery stores the outcome of an attempt, only if the delivery
	// is still on that attempt; it reports whether it did.
	RecordDelivery(ctx context.Context, r DeliveryResult) (bool, error)
	FindDeliveryByID(ctx context.Context, id int64) (*Delivery, error)
	// FindDeliveries returns the channel's deliveries, newest first.
	FindDeliveries(ctx context.Context, channelID int64, limit int) ([]*Delivery, error)
	FindFlipByID(ctx context.Context, id int64) (*Flip, error)
	// CountNotifiedFlips counts the beet's flips that send messages in
	// [since, until].
	CountNotifiedFlips(ctx context.Context, beetID int64, since, until time.Time) (int, error)
	// MarkFlapping makes delivery id the flapping notice of its beet on its
	// channel, unless another delivery created at or after since already
	// is; it reports whether it did.
	MarkFlapping(ctx context.Context, id int64, since time.Time) (bool, error)
	// CreateReminders adds a reminder delivery for every channel with
	// reminders whose beet is still down or anomalous and whose last
	// message about the incident went out (was not still pending) at
	// least its reminder period ago. It is idempotent per (incident,
	// channel, reminder number) across instances, and returns how many it
	// added.
	CreateReminders(ctx context.Context, now time.Time) (int, error)
	// DeleteDeliveriesBefore removes up to limit finished deliveries
	// created before t and returns how many it removed.
	DeleteDeliveriesBefore(ctx context.Context, t time.Time, limit int) (int, error)
}
