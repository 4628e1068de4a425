// Package service holds Beet's use cases: it applies the domain's rules and
// account scoping on top of the store interfaces, so the HTTP API, the CLI
// and the dashboard share one implementation of every rule.
package service

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/beethq/beet"
)

// Options configures a Service. Zero values pick the defaults.
type Options struct {
	// Now is the clock; tests pass a fixed one.
	Now func() time.Time
	Log *slog.Logger
	// CleanupBatch bounds the events one clean-up transaction deletes, so
	// ingestion never waits long on it. Default 1000.
	CleanupBatch int
	// PasswordParams overrides the password hash cost; tests lower it.
	PasswordParams *PasswordParams
}

// Service is Beet's application layer.
type Service struct {
	store        beet.Store
	now          func() time.Time
	log          *slog.Logger
	cleanupBatch int
	pw           PasswordParams
	notify       NotifyOptions // set by SetNotify (channel.go)
	// cleanupObserve, set by SetCleanupObserver before jobs start, is told
	// of every clean-up pass that deletes (metrics).
	cleanupObserve func(*CleanupReport, error)

	maint   maintenanceView // live maintenance windows, for detection
	reports reportCache     // public status reports (statusreport.go)

	watchedMu sync.Mutex // the global guard's cached count of watched beets …
	watchedN  int
	watchedA  int // … and of the accounts they belong to
	watchedAt time.Time
	// Dashboard sign-in (session.go, throttle.go).
	setupDone atomic.Bool
	logins    *throttle
	hashing   chan struct{}
}

// New returns a Service over store.
func New(store beet.Store, opts Options) *Service {
	s := &Service{store: store, now: opts.Now, log: opts.Log, cleanupBatch: opts.CleanupBatch, pw: DefaultPasswordParams,
		logins: newThrottle(), hashing: make(chan struct{}, hashingSlots)}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.cleanupBatch <= 0 {
		s.cleanupBatch = 1000
	}
	if opts.PasswordParams != nil {
		s.pw = *opts.PasswordParams
	}
	return s
}

// Now returns the service clock's time in UTC, cut to microseconds (the
// precision the store keeps).
func (s *Service) Now() time.Time { return s.now().UTC().Truncate(time.Microsecond) }
