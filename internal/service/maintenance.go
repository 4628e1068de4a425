package service

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/beethq/beet"
)

// Detection runs inside the ingestion commit and may do no I/O there, so
// it asks an in-memory copy of the live maintenance windows whether a beet
// is in one. The sweeper refreshes the copy every few seconds (every
// instance runs one), and a window created or deleted through this
// service refreshes it at once.
const (
	maintenanceRefresh = 10 * time.Second
	// maxLiveMaintenance bounds the copy; past it the oldest windows are
	// left out (their events are then learned from as usual).
	maxLiveMaintenance = 100_000
)

type maintenanceView struct {
	mu       sync.RWMutex
	byBeet   map[int64][]window // windows of one beet, parsed
	byAcct   map[int64][]window // account-wide windows, parsed
	loadedAt time.Time
	failing  atomic.Bool // the last reload failed: logged once, and once when one works
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
