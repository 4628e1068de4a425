package service

import (
	"context"
	"sync"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/outage"
	"github.com/beethq/beet/internal/schedule"
)

// Detection runs inside the ingestion commit and may do no I/O there, so
// it asks an in-memory copy of the live maintenance windows whether a beet
// is in one. Every instance that runs detection refreshes the copy every
// few seconds: one with ingestion through RefreshMaintenance (app starts
// a job for it), a worker through its sweeps. A window created or deleted
// through this service refreshes it at once.
const (
	maintenanceRefresh = 10 * time.Second
	// maxLiveMaintenance bounds the copy; past it the oldest windows are
	// left out (their events are then learned from as usual).
	maxLiveMaintenance = 100_000
)

// maintenanceReads names the outage lines of the reloads: detection keeps
// the last copy meanwhile.
var maintenanceReads = outage.Step{Warn: true,
	Failed:    "maintenance windows could not be read; detection keeps the last copy until they can",
	Recovered: "maintenance windows can be read again"}

type maintenanceView struct {
	mu       sync.RWMutex
	byBeet   map[int64][]window // windows of one beet, parsed
	byAcct   map[int64][]window // account-wide windows, parsed
	loadedAt time.Time
	reads    outage.Log // the reloads' outages: two lines each
}

// refreshMaintenance reloads the view if it is older than maintenanceRefresh
// (or always, with force).
func (s *Service) refreshMaintenance(ctx context.Context, now time.Time, force bool) error {
	v := &s.maint
	v.mu.RLock()
	fresh := !v.loadedAt.IsZero() && now.Sub(v.loadedAt) < maintenanceRefresh && !now.Before(v.loadedAt)
	v.mu.RUnlock()
	if fresh && !force {
		return nil
	}
	// A day back: a beet's previous event may lie in a window that ended.
	ws, err := s.store.FindLiveMaintenance(ctx, now.Add(-24*time.Hour), maxLiveMaintenance)
	if err != nil {
		return err
	}
	byBeet, byAcct := map[int64][]window{}, map[int64][]window{}
	for _, w := range ws {
		if w.BeetID != 0 {
			byBeet[w.BeetID] = append(byBeet[w.BeetID], parseWindow(w))
		} else {
			byAcct[w.AccountID] = append(byAcct[w.AccountID], parseWindow(w))
		}
	}
	v.mu.Lock()
	v.byBeet, v.byAcct, v.loadedAt = byBeet, byAcct, now
	v.mu.Unlock()
	return nil
}

// RefreshMaintenance reloads the in-memory copy of the live maintenance
// windows if it is older than maintenanceRefresh. A failure is logged once
// per outage; detection keeps the last copy meanwhile.
func (s *Service) RefreshMaintenance(ctx context.Context) {
	now := s.Now()
	s.maint.reads.Note(ctx, s.log, now, maintenanceReads, s.refreshMaintenance(ctx, now, false))
}

// MaintenanceLoadedAt is when the in-memory copy of the windows was last
// loaded (zero: never).
func (s *Service) MaintenanceLoadedAt() time.Time {
	s.maint.mu.RLock()
	defer s.maint.mu.RUnlock()
	return s.maint.loadedAt
}

// inMaintenanceNow reports, from the in-memory view, whether b is in a
// maintenance window at t.
func (s *Service) inMaintenanceNow(b *beet.Beet, t time.Time) bool {
	v := &s.maint
	v.mu.RLock()
	defer v.mu.RUnlock()
	for _, ws := range [][]window{v.byBeet[b.ID], v.byAcct[b.AccountID]} {
		for _, w := range ws {
			if w.covers(t) {
				return true
			}
		}
	}
	return false
}

// CreateMaintenance adds a maintenance window to the account, or to one of
// its beets (w.BeetID).
func (s *Service) CreateMaintenance(ctx context.Context, accountID int64, w *beet.MaintenanceWindow) error {
	w.AccountID = accountID
	w.CreatedAt = s.Now()
	if w.BeetID != 0 {
		if _, err := s.Beet(ctx, accountID, w.BeetID); err != nil {
			return &beet.Error{Code: beet.ENOTFOUND, Field: "beet_id", Message: beet.ErrorMessage(err)}
		}
	}
	if err := w.Validate(); err != nil {
		return err
	}
	if w.Cron != "" {
		if _, err := schedule.ParseCron(w.Cron); err != nil {
			return beet.FieldError("cron", "%q is not a valid cron expression: %v", w.Cron, err)
		}
	}
	ws, err := s.store.FindMaintenance(ctx, accountID, 0)
	if err != nil {
		return err
	}
	if len(ws) >= maxMaintenanceWindows {
		return beet.Errorf(beet.ECONFLICT, "an account has at most %d maintenance windows", maxMaintenanceWindows)
	}
	if err := s.store.CreateMaintenance(ctx, w); err != nil {
		return err
	}
	return s.refreshMaintenance(ctx, s.Now(), true)
}

const maxMaintenanceWindows = 100

// MaintenanceWindows lists the account's windows.
func (s *Service) MaintenanceWindows(ctx context.Context, accountID int64) ([]*beet.MaintenanceWindow, error) {
	return s.store.FindMaintenance(ctx, accountID, 0)
}

// DeleteMaintenance removes the account's window.
func (s *Service) DeleteMaintenance(ctx context.Context, accountID, id int64) error {
	w, err := s.store.FindMaintenanceByID(ctx, id)
	if err != nil {
		return err
	}
	if w.AccountID != accountID {
		return beet.Errorf(beet.ENOTFOUND, "maintenance window %d not found", id)
	}
	if err := s.store.DeleteMaintenance(ctx, id); err != nil {
		return err
	}
	return s.refreshMaintenance(ctx, s.Now(), true)
}

// InMaintenance reports whether the beet is in one of its or its account's
// maintenance windows at t. Notifications use it to hold messages;
// detection, which runs inside the ingestion commit, asks an in-memory
// view of the same windows instead (maintenanceView).
func (s *Service) InMaintenance(ctx context.Context, beetID int64, t time.Time) (bool, error) {
	b, err := s.store.FindBeetByID(ctx, beetID)
	if err != nil {
		return false, err
	}
	ws, err := s.store.FindMaintenance(ctx, b.AccountID, beetID)
	if err != nil {
		return false, err
	}
	for _, w := range ws {
		if Covers(w, t) {
			return true, nil
		}
	}
	return false, nil
}

// Covers reports whether window w holds instant t: within [start, end)
// for a one-off window, or within duration of the latest cron slot at or
// before t, on the wall clock of its time zone.
func Covers(w *beet.MaintenanceWindow, t time.Time) bool {
	return parseWindow(w).covers(t)
}

// window is a maintenance window with its cron expression and zone parsed,
// so checking it costs no parsing.
type window struct {
	w    *beet.MaintenanceWindow
	cron *schedule.Cron // nil for a one-off window, or one that does not parse
	loc  *time.Location
}

func parseWindow(w *beet.MaintenanceWindow) window {
	pw := window{w: w}
	if w.Cron == "" {
		return pw
	}
	c, err := schedule.ParseCron(w.Cron)
	if err != nil {
		return pw
	}
	loc, err := time.LoadLocation(w.Timezone)
	if err != nil {
		return pw
	}
	pw.cron, pw.loc = c, loc
	return pw
}

func (pw window) covers(t time.Time) bool {
	w := pw.w
	if w.Cron == "" {
		return w.Start != nil && w.End != nil && !t.Before(*w.Start) && t.Before(*w.End)
	}
	if pw.cron == nil {
		return false // a window that does not parse covers nothing
	}
	slot := pw.cron.Prev(t, pw.loc)
	return !slot.IsZero() && t.Before(slot.Add(w.Duration))
}
