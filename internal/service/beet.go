package service

import (
	"context"
	"strings"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
	"github.com/beethq/beet/internal/schedule"
)

// BeetInput is what a person gives to create a beet. Zero values take the
// defaults: the account's time zone, detection auto (a cron schedule
// without a zone runs in the beet's zone).
type BeetInput struct {
	Name        string
	Description string
	Timezone    string
	Detection   *beet.Detection
	AllowBots   bool
	// ResumeOnEvent: a paused beet's next counted event resumes it.
	ResumeOnEvent bool
	// Channels chooses the channels the beet notifies; nil means all of
	// the account's (channel.go).
	Channels *[]int64
}

// CreateBeet creates a beet for the account with a fresh token.
func (s *Service) CreateBeet(ctx context.Context, accountID int64, in BeetInput) (*beet.Beet, error) {
	b, err := s.draftBeet(ctx, accountID, in)
	if err != nil {
		return nil, err
	}
	if in.Channels != nil {
		if err := s.checkChannelIDs(ctx, accountID, *in.Channels); err != nil {
			return nil, err
		}
	}
	if _, total, err := s.store.FindBeets(ctx, beet.BeetFilter{AccountID: &accountID, Limit: 1}); err != nil {
		return nil, err
	} else if total >= beet.MaxBeetsPerAccount {
		return nil, beet.Errorf(beet.ECONFLICT, "an account has at most %d beets", beet.MaxBeetsPerAccount)
	}
	// A token collision is astronomically unlikely, but a retry costs nothing.
	for attempt := 0; ; attempt++ {
		b.Token = beet.NewToken()
		err := s.store.CreateBeet(ctx, b)
		if err == nil {
			break
		}
		if beet.ErrorCode(err) != beet.ECONFLICT || attempt == 2 {
			return nil, err
		}
	}
	s.log.Info("beet created", "account_id", accountID, "beet_id", b.ID)
	if err := s.applyChannels(ctx, b, in.Channels); err != nil {
		return nil, err
	}
	return b, nil
}

// Beet returns the account's beet; another account's beet is not found.
func (s *Service) Beet(ctx context.Context, accountID, id int64) (*beet.Beet, error) {
	b, err := s.store.FindBeetByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if b.AccountID != accountID {
		return nil, beet.Errorf(beet.ENOTFOUND, "beet %d not found", id)
	}
	if err := s.applyChannels(ctx, b, nil); err != nil {
		return nil, err
	}
	return b, nil
}

// Beets lists a page of the account's beets and how many match in all.
func (s *Service) Beets(ctx context.Context, accountID int64, f beet.BeetFilter) ([]*beet.Beet, int, error) {
	f.AccountID = &accountID
	if err := checkPage(f.Limit, f.Offset); err != nil {
		return nil, 0, err
	}
	beets, total, err := s.store.FindBeets(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	if err := s.fillChannels(ctx, beets); err != nil {
		return nil, 0, err
	}
	return beets, total, nil
}

// UpdateBeet changes the account's beet. The result is validated as a whole
// before anything is written.
func (s *Service) UpdateBeet(ctx context.Context, accountID, id int64, upd beet.BeetUpdate) (*beet.Beet, error) {
	b, err := s.Beet(ctx, accountID, id)
	if err != nil {
		return nil, err
	}
	if upd.Name != nil {
		name := strings.TrimSpace(*upd.Name)
		upd.Name = &name
	}
	if d := upd.Detection; d != nil && d.Mode == beet.ModeCron && d.Timezone == "" {
		withZone := *d
		withZone.Timezone = b.Timezone
		if upd.Timezone != nil {
			withZone.Timezone = *upd.Timezone
		}
		upd.Detection = &withZone
	}
	next := upd.Apply(*b)
	if err := validateBeet(&next); err != nil {
		return nil, err
	}
	if upd.Channels != nil {
		if err := s.checkChannelIDs(ctx, accountID, *upd.Channels); err != nil {
			return nil, err
		}
	}
	now := s.Now()
	if upd.Detection != nil || upd.Timezone != nil {
		// The beet's deadline, status and reason follow the new settings
		// at once (detect.ApplySettings), not from its next event.
		upd.Redetect = func(was beet.Beet, b *beet.Beet) ([]beet.Flip, error) {
			flips, err := detect.ApplySettings(was, b, now)
			if err != nil {
				return nil, err
			}
			for i := range flips {
				s.logFlip(&flips[i])
			}
			return flips, nil
		}
	}
	nb, err := s.store.UpdateBeet(ctx, id, upd, now)
	if err != nil {
		return nil, err
	}
	if err := s.applyChannels(ctx, nb, upd.Channels); err != nil {
		return nil, err
	}
	return nb, nil
}

// DeleteBeet deletes the account's beet with its events.
func (s *Service) DeleteBeet(ctx context.Context, accountID, id int64) error {
	if _, err := s.Beet(ctx, accountID, id); err != nil {
		return err
	}
	if err := s.store.DeleteBeet(ctx, id); err != nil {
		return err
	}
	s.log.Info("beet deleted", "account_id", accountID, "beet_id", id)
	return nil
}

// RotateToken gives the beet a new token; the old one stops working at once.
func (s *Service) RotateToken(ctx context.Context, accountID, id int64) (string, error) {
	b, err := s.Beet(ctx, accountID, id)
	if err != nil {
		return "", err
	}
	token := beet.NewToken()
	if err := s.store.SetBeetToken(ctx, id, token, s.Now()); err != nil {
		return "", err
	}
	s.log.Info("token rotated", "account_id", accountID, "beet_id", id, "old_token", beet.Redact(b.Token))
	return token, nil
}

// Pause stops a beet from raising alerts; it still records events.
// Pausing a paused beet changes nothing.
func (s *Service) Pause(ctx context.Context, accountID, id int64) (*beet.Beet, error) {
	b, _, err := s.flipManually(ctx, accountID, id, func(b *beet.Beet) (beet.Status, string) {
		if b.Status == beet.StatusPaused {
			return "", ""
		}
		return beet.StatusPaused, "Paused by a user: events are recorded, no alerts are raised."
	})
	return b, err
}

// Resume lets a paused beet raise alerts again. It starts over from what
// it knows: new without events, otherwise up (in auto mode learning while
// its model is not armed), with a deadline counted from now as if an event
// had just come (a silence flagged then still names the last real event;
// auto mode keeps what it learned); an open run with a time
// limit keeps the limit's end as its deadline. Status and deadline are
// written in one transaction, with the beet locked against events and the
// sweeper (detect.Resume). Resuming a beet that is not paused changes
// nothing: its deadline stays where its events put it.
func (s *Service) Resume(ctx context.Context, accountID, id int64) (*beet.Beet, error) {
	b, err := s.Beet(ctx, accountID, id)
	if err != nil || b.Status != beet.StatusPaused {
		return b, err
	}
	now := s.Now()
	return s.store.UpdateBeet(ctx, id, beet.BeetUpdate{Redetect: func(_ beet.Beet, b *beet.Beet) ([]beet.Flip, error) {
		return detect.Resume(b, now, "a user")
	}}, now)
}

// flipManually applies a person's state change with a compare-and-set, and
// tries again if the detector changed the state in between. It reports
// whether it flipped: not when next asks for no change.
func (s *Service) flipManually(ctx context.Context, accountID, id int64, next func(*beet.Beet) (beet.Status, string)) (*beet.Beet, bool, error) {
	for attempt := 0; ; attempt++ {
		b, err := s.Beet(ctx, accountID, id)
		if err != nil {
			return nil, false, err
		}
		to, reason := next(b)
		if to == "" {
			return b, false, nil
		}
		f := &beet.Flip{BeetID: id, At: s.Now(), From: b.Status, To: to, Kind: beet.FlipManual, Reason: reason}
		err = s.store.SetBeetStatus(ctx, f)
		if err == nil {
			b.Status, b.StatusReason, b.StatusSince = to, reason, f.At
			return b, true, nil
		}
		if beet.ErrorCode(err) != beet.ECONFLICT || attempt == 4 {
			return nil, false, err
		}
	}
}

// Events returns a page of the beet's events, newest first.
func (s *Service) Events(ctx context.Context, accountID int64, f beet.EventFilter) ([]*beet.Event, error) {
	if _, err := s.Beet(ctx, accountID, f.BeetID); err != nil {
		return nil, err
	}
	if err := checkPage(f.Limit, 0); err != nil {
		return nil, err
	}
	if f.Since != nil && f.Until != nil && !f.Since.Before(*f.Until) {
		return nil, beet.FieldError("since", "must be before until")
	}
	return s.store.FindEvents(ctx, f)
}

// Flips returns a page of the beet's state changes, newest first.
func (s *Service) Flips(ctx context.Context, accountID int64, f beet.FlipFilter) ([]*beet.Flip, error) {
	if _, err := s.Beet(ctx, accountID, f.BeetID); err != nil {
		return nil, err
	}
	if err := checkPage(f.Limit, 0); err != nil {
		return nil, err
	}
	if f.BeforeID != nil && f.Until == nil {
		return nil, beet.FieldError("before_id", "goes with until: the at of the flip it names")
	}
	return s.store.FindFlipPage(ctx, f)
}

// Problems returns the beet's recent ingestion problems, newest first.
func (s *Service) Problems(ctx context.Context, accountID, id int64, limit int) ([]*beet.Problem, error) {
	if _, err := s.Beet(ctx, accountID, id); err != nil {
		return nil, err
	}
	if err := checkPage(limit, 0); err != nil {
		return nil, err
	}
	return s.store.FindProblems(ctx, id, limit)
}

// draftBeet is the beet in would create, with the defaults applied and
// validated, without a token: CreateBeet's and PreviewSchedule's one
// reading of the input, so a preview refuses exactly what create refuses.
func (s *Service) draftBeet(ctx context.Context, accountID int64, in BeetInput) (*beet.Beet, error) {
	now := s.Now()
	b := &beet.Beet{
		AccountID:     accountID,
		Name:          strings.TrimSpace(in.Name), // pasted "  Checkout " is "Checkout"
		Description:   in.Description,
		Timezone:      in.Timezone,
		Detection:     beet.Detection{Mode: beet.ModeAuto},
		AllowBots:     in.AllowBots,
		ResumeOnEvent: in.ResumeOnEvent,
		Status:        beet.StatusNew,
		CreatedAt:     now,
		UpdatedAt:     now,
	}
	if b.Timezone == "" {
		// The account's zone: set from the browser at setup.
		acc, err := s.store.FindAccountByID(ctx, accountID)
		if err != nil {
			return nil, err
		}
		b.Timezone = acc.Timezone
	}
	if in.Detection != nil {
		b.Detection = *in.Detection
		if b.Detection.Mode == beet.ModeCron && b.Detection.Timezone == "" {
			// A schedule without a zone runs in the beet's own zone (the
			// account's unless given), not in an error.
			b.Detection.Timezone = b.Timezone
		}
	}
	if err := validateBeet(b); err != nil {
		return nil, err
	}
	return b, nil
}

// SchedulePreview is what a beet with given settings would expect, for
// the new-beet form: in words, and its next expected times.
type SchedulePreview struct {
	Expects string
	// Zone names the time zone the times are in: the schedule's in cron
	// mode, else the beet's.
	Zone string
	// Next are the next expected times: cron mode's next runs, or in
	// period mode when events would be due if one came now and then one
	// every period (FromNow). Auto mode has none.
	Next    []time.Time
	FromNow bool
}

// maxPreview bounds how many times a preview lists.
const maxPreview = 10

// PreviewSchedule reads in as CreateBeet does (the same defaults, the same
// validation errors) and says what the beet would expect, with its next n
// expected times; nothing is saved. An empty name is not an error here:
// the form previews the schedule before the name is typed.
func (s *Service) PreviewSchedule(ctx context.Context, accountID int64, in BeetInput, n int) (*SchedulePreview, error) {
	if in.Name == "" {
		in.Name = "preview"
	}
	b, err := s.draftBeet(ctx, accountID, in)
	if err != nil {
		return nil, err
	}
	n = min(max(n, 0), maxPreview)
	now := s.Now()
	p := &SchedulePreview{Zone: b.Timezone}
	d := b.Detection
	switch d.Mode {
	case beet.ModeCron:
		c, err := schedule.ParseCron(d.Cron)
		if err != nil {
			return nil, beet.FieldError("detection.cron", "%q is not a valid cron expression: %v", d.Cron, err)
		}
		loc, err := time.LoadLocation(d.Timezone)
		if err != nil {
			return nil, beet.FieldError("detection.timezone", "%q is not an IANA time zone name", d.Timezone)
		}
		p.Zone = d.Timezone
		for t := now; len(p.Next) < n; {
			if t = c.Next(t, loc); t.IsZero() {
				break
			}
			p.Next = append(p.Next, t)
		}
	case beet.ModePeriod:
		p.FromNow = true
		every := time.Duration(d.PeriodSeconds) * time.Second
		for i := 1; i <= n; i++ {
			p.Next = append(p.Next, now.Add(time.Duration(i)*every))
		}
	}
	if d.Mode == beet.ModeAuto {
		p.Expects = "Learns this beet's rhythm first: full alerts start " + detect.ArmingRule.Words() + "; " + detect.ArmingRule.Meanwhile() + "."
	} else {
		p.Expects = detect.Expectation(b)
	}
	return p, nil
}

func validateBeet(b *beet.Beet) error {
	if err := b.Validate(); err != nil {
		return err
	}
	if b.Detection.Mode == beet.ModeCron {
		if _, err := schedule.ParseCron(b.Detection.Cron); err != nil {
			return beet.FieldError("detection.cron", "%q is not a valid cron expression: %v", b.Detection.Cron, err)
		}
	}
	return nil
}

func checkPage(limit, offset int) error {
	if limit < 0 || limit > beet.MaxPageLimit {
		return beet.FieldError("limit", "must be from 1 to %d", beet.MaxPageLimit)
	}
	if offset < 0 {
		return beet.FieldError("offset", "must not be negative")
	}
	return nil
}
