package service

import (
	"context"
	"sync"
	"time"

	"github.com/beethq/beet"
)

// Login throttling: failed sign-ins are counted per email and per client
// address over loginWindow; past the limit, sign-in is refused until the
// window passes. Only failures count, so a person who types their password
// right is never slowed down.
const (
	loginWindow      = 15 * time.Minute
	loginFailsPerKey = 10  // per email
	loginFailsPerIP  = 50  // per client address (offices share one)
	loginMaxKeys     = 1e5 // per map; see throttle.fail
)

// throttled runs one password check, try, under the sign-in limits: it is
// refused with ERATELIMITED past the failures allowed for key (an email)
// or ip (either may be empty), and an EUNAUTHORIZED from try counts as a
// failure. Sign-in and a password change's current-password check share
// it, so a stolen session cannot guess the password faster than sign-in.
func (s *Service) throttled(ctx context.Context, key, ip string, try func() error) error {
	now := s.now()
	if err := s.logins.check(now, key, ip); err != nil {
		return err
	}
	// argon2id takes 64 MiB: bound how many run at once, and give up
	// waiting when the client does.
	select {
	case s.hashing <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	// Checked again once it is this attempt's turn: a burst sent at once
	// all passed the first check before any of its failures was counted
	// (200 parallel guesses, no 429), and at most the hash slots' attempts
	// now run between a check and its count.
	if err := s.logins.check(s.now(), key, ip); err != nil {
		<-s.hashing
		return err
	}
	err := try()
	<-s.hashing
	switch {
	case beet.ErrorCode(err) == beet.EUNAUTHORIZED:
		s.logins.fail(now, key, ip)
	case err == nil:
		s.logins.forget(key)
	}
	return err
}

// normaliseLoginEmail is the throttling key of an email as typed: case
// and spaces do not make a new key.
func normaliseLoginEmail(email string) string {
	e, err := normaliseEmail(email)
	if err != nil {
		return "invalid"
	}
	return e
}

// throttle counts failures per email and per address in fixed windows.
// Both maps are bounded: when one is full of live entries, new keys go
// uncounted rather than pushing out old ones, so flooding it with made-up
// emails cannot wipe the count of the one being guessed.
type throttle struct {
	mu     sync.Mutex
	emails map[string]*fails
	ips    map[string]*fails
}

type fails struct {
	n     int
	start time.Time
}

func newThrottle() *throttle {
	return &throttle{emails: map[string]*fails{}, ips: map[string]*fails{}}
}

func (t *throttle) check(now time.Time, email, ip string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range []struct {
		m     map[string]*fails
		key   string
		limit int
	}{{t.emails, email, loginFailsPerKey}, {t.ips, ip, loginFailsPerIP}} {
		f := c.m[c.key]
		if c.key == "" || f == nil || now.Sub(f.start) >= loginWindow || f.n < c.limit {
			continue
		}
		wait := f.start.Add(loginWindow).Sub(now)
		return beet.RateLimited(wait, "too many failed attempts; try again in %d min", int(wait/time.Minute)+1)
	}
	return nil
}

func (t *throttle) fail(now time.Time, email, ip string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range []struct {
		m   map[string]*fails
		key string
	}{{t.emails, email}, {t.ips, ip}} {
		if c.key == "" {
			continue
		}
		f := c.m[c.key]
		if f == nil || now.Sub(f.start) >= loginWindow {
			if f == nil && len(c.m) >= loginMaxKeys {
				prune(c.m, now)
				if len(c.m) >= loginMaxKeys {
					continue
				}
			}
			f = &fails{start: now}
			c.m[c.key] = f
		}
		f.n++
	}
}

func (t *throttle) forget(email string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.emails, email)
}

func prune(m map[string]*fails, now time.Time) {
	for k, f := range m {
		if now.Sub(f.start) >= loginWindow {
			delete(m, k)
		}
	}
}
