package beet

import (
	"context"
	"time"
)

// Beet is one monitored event stream. Its token is the only credential of
// the ingestion endpoint.
type Beet struct {
	ID           int64
	AccountID    int64
	Name         string
	Description  string
	Token        string
	Status       Status
	StatusReason string
	// StatusSince is when the beet entered its status (its latest flip),
	// so a recovery can say how long it was down.
	StatusSince time.Time
	Timezone    string
	Detection   Detection
	AllowBots   bool
	// ResumeOnEvent makes the beet's next counted event (a ping, a
	// success or a failure; not a start or a log) resume it while it is
	// paused, as Healthchecks resumes a check without manual_resume.
	// Off, a paused beet records events and waits for POST /resume.
	ResumeOnEvent bool
	LastEventAt   *time.Time
	// DueAt is when the detector next looks at the beet if no event comes
	// first; nil when nothing is pending (new, paused, already down).
	DueAt *time.Time
	// Model is the learned model of a beet in auto mode, as the detector
	// encodes it; nil before its first event.
	Model []byte
	// Runs is the beet's open run and recent run durations (job signals).
	Runs Runs
	// Channels are the IDs of the channels the beet notifies; the service
	// fills them in for the API (nil when not loaded).
	Channels []int64
	// Tags label the beet for the list's filter and badges; the service
	// fills them in (TagStore), nil when not loaded.
	Tags      []string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Limits on beet fields; every size has one.
const (
	MaxNameLen        = 200
	MaxDescriptionLen = 2000
	// MaxBeetsPerAccount bounds what one account can make Beet watch
	// (and its share of what the global guard counts).
	MaxBeetsPerAccount = 10000
)

// Validate checks the fields a person sets. Detection's cron syntax is
// checked by the caller, which owns the cron parser.
func (b *Beet) Validate() error {
	if err := ValidateName(b.Name); err != nil {
		return err
	}
	if err := ValidateDescription(b.Description); err != nil {
		return err
	}
	if err := ValidateTimezone("timezone", b.Timezone); err != nil {
		return err
	}
	return b.Detection.Validate()
}

// ValidateName checks a beet's or a channel's name: one line of 1 to
// MaxNameLen characters, not blank.
func ValidateName(name string) error {
	return ValidateText("name", name, MaxNameLen, TextRequired)
}

// ValidateDescription checks a beet description: at most MaxDescriptionLen characters.
func ValidateDescription(d string) error {
	return ValidateText("description", d, MaxDescriptionLen, TextLines)
}

// BeetFilter selects beets. A nil or zero field means "any".
type BeetFilter struct {
	AccountID *int64
	Status    *Status
	// Name matches beets whose name contains it, in any case; "" matches all.
	Name string
	// Tag matches beets with that tag; "" matches all.
	Tag string
	// Order sorts the page; the zero value is creation order.
	Order  BeetOrder
	Limit  int // 0 means the store's default
	Offset int
}

// BeetOrder is how a list of beets is sorted. Every order ends with the
// beet's ID, so pages never overlap.
type BeetOrder string

const (
	OrderCreated   BeetOrder = ""           // oldest first
	OrderName      BeetOrder = "name"       // by name, any case
	OrderStatus    BeetOrder = "status"     // the worst first: down, anomalous, learning, new, up, paused
	OrderLastEvent BeetOrder = "last_event" // the longest silent first, those without an event before all
	OrderTag       BeetOrder = "tag"        // grouped by the first tag (a-z), untagged last; by name within
)

// BeetOrders lists every order.
var BeetOrders = []BeetOrder{OrderCreated, OrderName, OrderStatus, OrderLastEvent, OrderTag}

// Valid reports whether o is a known order.
func (o BeetOrder) Valid() bool {
	for _, x := range BeetOrders {
		if o == x {
			return true
		}
	}
	return false
}

// BeetUpdate changes a beet. A nil field means "unchanged".
type BeetUpdate struct {
	Name        *string
	Description *string
	Timezone    *string
	Detection   *Detection
	AllowBots   *bool
	// ResumeOnEvent sets Beet.ResumeOnEvent.
	ResumeOnEvent *bool
	// Channels replaces the channels the beet notifies (the service
	// applies it; see ChannelStore.SetBeetChannels).
	Channels *[]int64
	// Redetect, if set, works the beet's detection state out again for
	// the new settings, in the transaction that writes them, with the beet
	// locked against events and the sweeper meanwhile: was is the beet as
	// it stood, b the beet with the update applied. It changes b's Status,
	// StatusReason, StatusSince, DueAt and Model in place and returns the
	// flips, in time order, which the store records as it records any
	// flip (with their messages). An error leaves the beet as it was.
	Redetect func(was Beet, b *Beet) ([]Flip, error)
}

// Apply returns b with upd applied, for validation before the store writes it.
func (upd BeetUpdate) Apply(b Beet) Beet {
	if upd.Name != nil {
		b.Name = *upd.Name
	}
	if upd.Description != nil {
		b.Description = *upd.Description
	}
	if upd.Timezone != nil {
		b.Timezone = *upd.Timezone
	}
	if upd.Detection != nil {
		b.Detection = *upd.Detection
	}
	if upd.AllowBots != nil {
		b.AllowBots = *upd.AllowBots
	}
	if upd.ResumeOnEvent != nil {
		b.ResumeOnEvent = *upd.ResumeOnEvent
	}
	return b
}

// DueChange is what one beet's passed deadline decided (BeetStore.ApplyDue).
type DueChange struct {
	BeetID  int64
	Due     time.Time  // the deadline that passed, as read
	Flip    *Flip      // nil: no state change, the deadline only moves
	Next    *time.Time // the next deadline; nil clears it
	Applied bool       // set by ApplyDue: false if the beet had moved on
}

// BeetStore keeps beets. Account scoping is the service's job: the store
// finds by ID, and the service answers ENOTFOUND for another account's beet.
type BeetStore interface {
	// CreateBeet inserts b and sets its ID. A taken token is ECONFLICT.
	CreateBeet(ctx context.Context, b *Beet) error
	FindBeetByID(ctx context.Context, id int64) (*Beet, error)
	FindBeetByToken(ctx context.Context, token string) (*Beet, error)
	// FindBeets returns one page of matching beets, oldest first, and the
	// number of matching beets in all.
	FindBeets(ctx context.Context, f BeetFilter) ([]*Beet, int, error)
	UpdateBeet(ctx context.Context, id int64, upd BeetUpdate, at time.Time) (*Beet, error)
	// DeleteBeet removes the beet with its events, problems and flips.
	DeleteBeet(ctx context.Context, id int64) error
	// SetBeetToken replaces the token; the old one stops matching at once.
	SetBeetToken(ctx context.Context, id int64, token string, at time.Time) error
	// SetBeetStatus moves the beet from f.From to f.To and records f, in one
	// transaction, only if the beet is still in f.From (compare and set);
	// status_reason becomes f.Reason and f.ID is set. It returns ECONFLICT
	// when the status had already changed.
	SetBeetStatus(ctx context.Context, f *Flip) error
	// FindDueBeets returns up to limit beets whose deadline is at or before
	// t, earliest first.
	FindDueBeets(ctx context.Context, t time.Time, limit int) ([]*Beet, error)
	// SetBeetDue sets the beet's deadline, or clears it when due is nil.
	SetBeetDue(ctx context.Context, id int64, due *time.Time) error
	// ApplyDue applies what passed deadlines decided, in one transaction:
	// each change moves its beet's deadline to Next (nil clears it) and, if
	// it has a Flip, moves the beet from Flip.From to Flip.To and records
	// the flip, only if the beet's deadline is still Due (and its status
	// Flip.From). So a deadline that an arriving event moved, or that
	// another instance already handled, changes nothing. It sets Applied,
	// and the ID of each recorded flip.
	ApplyDue(ctx context.Context, changes []DueChange) error
}
