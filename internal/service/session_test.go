package service_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/service"
)

// clock is a settable clock for the service.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func code(err error) string { return beet.ErrorCode(err) }

func TestSetupOnceThenSignIn(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC)}
	svc, _ := openService(t, service.Options{Now: clk.now})

	if need, err := svc.SetupNeeded(ctx); err != nil || !need {
		t.Fatalf("SetupNeeded on an empty database = %v, %v", need, err)
	}
	if _, err := svc.Setup(ctx, "not an email", "correct horse", beet.PlanFree, ""); beet.ErrorField(err) != "email" {
		t.Fatalf("setup with a bad email: %v", err)
	}
	in, err := svc.Setup(ctx, "Ada@Example.com", "correct horse", beet.PlanPro, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Cookie) < 40 || in.Session.AccountID == 0 {
		t.Fatalf("setup signed in with %+v", in)
	}
	if need, _ := svc.SetupNeeded(ctx); need {
		t.Error("SetupNeeded after setup")
	}
	if _, err := svc.Setup(ctx, "eve@example.com", "correct horse", beet.PlanFree, ""); code(err) != beet.ECONFLICT {
		t.Fatalf("second setup: %v, want conflict", err)
	}
	a, _ := svc.Account(ctx, in.Session.AccountID)
	if a.Plan != beet.PlanPro {
		t.Errorf("plan = %s, want pro", a.Plan)
	}

	sess, err := svc.SessionFor(ctx, in.Cookie)
	if err != nil || sess.AccountID != in.Session.AccountID {
		t.Fatalf("SessionFor = %+v, %v", sess, err)
	}
	// Change the cookie's last character to another one: always "A" did
	// nothing for a cookie already ending in "A" (1 run in 64).
	last := "A"
	if strings.HasSuffix(in.Cookie, last) {
		last = "B"
	}
	if _, err := svc.SessionFor(ctx, in.Cookie[:len(in.Cookie)-1]+last); code(err) != beet.EUNAUTHORIZED {
		t.Errorf("a changed cookie: %v, want unauthorized", err)
	}
	if _, err := svc.SignIn(ctx, "ada@example.com", "wrong horse", "192.0.2.1"); code(err) != beet.EUNAUTHORIZED {
		t.Errorf("wrong password: %v", err)
	}
	again, err := svc.SignIn(ctx, " ADA@example.com ", "correct horse", "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.SignOut(ctx, again.Cookie); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SessionFor(ctx, again.Cookie); code(err) != beet.EUNAUTHORIZED {
		t.Errorf("after sign-out: %v", err)
	}
	// The first session is untouched by the second one's sign-out.
	if _, err := svc.SessionFor(ctx, in.Cookie); err != nil {
		t.Errorf("other session after sign-out: %v", err)
	}
}

func TestSessionExpiry(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC)}
	svc, _ := openService(t, service.Options{Now: clk.now})
	in, err := svc.Setup(ctx, "ada@example.com", "correct horse", beet.PlanFree, "")
	if err != nil {
		t.Fatal(err)
	}
	// Used every 6 days, a session lives until its absolute limit.
	for range 4 {
		clk.advance(6 * 24 * time.Hour)
		if _, err := svc.SessionFor(ctx, in.Cookie); err != nil {
			t.Fatalf("session in use at %s: %v", clk.now(), err)
		}
	}
	clk.advance(service.SessionMax - 24*24*time.Hour) // 30 days after sign-in
	if _, err := svc.SessionFor(ctx, in.Cookie); code(err) != beet.EUNAUTHORIZED {
		t.Fatalf("session past its absolute limit: %v", err)
	}
	// Idle for longer than SessionIdle: gone.
	in, err = svc.SignIn(ctx, "ada@example.com", "correct horse", "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	clk.advance(service.SessionIdle - time.Second)
	if _, err := svc.SessionFor(ctx, in.Cookie); err != nil {
		t.Fatalf("session just inside the idle limit: %v", err)
	}
	clk.advance(service.SessionIdle)
	if _, err := svc.SessionFor(ctx, in.Cookie); code(err) != beet.EUNAUTHORIZED {
		t.Fatalf("idle session: %v", err)
	}
}

func TestLoginThrottling(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC)}
	svc, _ := openService(t, service.Options{Now: clk.now})
	if _, err := svc.Setup(ctx, "ada@example.com", "correct horse", beet.PlanFree, ""); err != nil {
		t.Fatal(err)
	}
	// Ten wrong passwords for one email from ten addresses...
	for i := range 10 {
		if _, err := svc.SignIn(ctx, "ada@example.com", "guess", "192.0.2."+string(rune('0'+i))); code(err) != beet.EUNAUTHORIZED {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	// ...and even the right one is refused for that email for a while.
	if _, err := svc.SignIn(ctx, "ADA@example.com", "correct horse", "198.51.100.1"); code(err) != beet.ERATELIMITED {
		t.Fatalf("right password after 10 failures: %v, want rate_limited", err)
	}
	clk.advance(15 * time.Minute)
	if _, err := svc.SignIn(ctx, "ada@example.com", "correct horse", "198.51.100.1"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	// One address guessing many emails is stopped after 50.
	for i := range 50 {
		svc.SignIn(ctx, "nobody"+string(rune('a'+i%26))+string(rune('a'+i/26))+"@example.com", "guess", "203.0.113.9")
	}
	if _, err := svc.SignIn(ctx, "ada@example.com", "correct horse", "203.0.113.9"); code(err) != beet.ERATELIMITED {
		t.Fatalf("51st attempt from one address: %v, want rate_limited", err)
	}
	if _, err := svc.SignIn(ctx, "ada@example.com", "correct horse", "203.0.113.10"); err != nil {
		t.Fatalf("another address: %v", err)
	}
}

// A password change's current-password check counts against sign-in's
// limit for the user's email: a stolen session cannot guess the password
// any faster than the sign-in page allows.
func TestChangePasswordThrottled(t *testing.T) {
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC)}
	svc, _ := openService(t, service.Options{Now: clk.now})
	if _, err := svc.Setup(ctx, "ada@example.com", "correct horse", beet.PlanFree, ""); err != nil {
		t.Fatal(err)
	}
	in, err := svc.SignIn(ctx, "ada@example.com", "correct horse", "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := svc.ChangePassword(ctx, in.Session.UserID, "guess", "new password", in.Session.IDHash); beet.ErrorField(err) != "current" {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	if err := svc.ChangePassword(ctx, in.Session.UserID, "correct horse", "new password", in.Session.IDHash); code(err) != beet.ERATELIMITED {
		t.Fatalf("11th try, the right password: %v, want rate_limited", err)
	}
	if _, err := svc.SignIn(ctx, "ada@example.com", "correct horse", "198.51.100.1"); code(err) != beet.ERATELIMITED {
		t.Fatalf("sign-in after 10 wrong current passwords: %v, want rate_limited", err)
	}
	clk.advance(15 * time.Minute)
	if err := svc.ChangePassword(ctx, in.Session.UserID, "correct horse", "new password", in.Session.IDHash); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}

func TestAccountPagesScoping(t *testing.T) {
	ctx := context.Background()
	svc, _ := openService(t, service.Options{})
	a, _, err := svc.CreateAccount(ctx, "a@example.com", "password1", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := svc.CreateAccount(ctx, "b@example.com", "password1", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	keysB, _ := svc.APIKeys(ctx, b.ID)
	if err := svc.RevokeAccountAPIKey(ctx, a.ID, keysB[0].ID); code(err) != beet.ENOTFOUND {
		t.Fatalf("revoking another account's key: %v, want not_found", err)
	}
	k, plain, err := svc.CreateAPIKey(ctx, a.ID, "deploys")
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.RevokeAccountAPIKey(ctx, a.ID, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AuthenticateAPIKey(ctx, plain); code(err) != beet.EUNAUTHORIZED {
		t.Errorf("revoked key still works: %v", err)
	}
	if _, err := svc.AuthenticateAPIKey(ctx, mustKey(t, svc, b.ID)); err != nil {
		t.Errorf("the other account's keys stopped working: %v", err)
	}
	u, err := svc.AddUser(ctx, a.ID, "grace@example.com", "password2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AddUser(ctx, b.ID, "GRACE@example.com", "password2"); beet.ErrorField(err) != "email" {
		t.Errorf("a taken email: %v", err)
	}
	users, _ := svc.Users(ctx, a.ID)
	if len(users) != 2 || users[1].ID != u.ID {
		t.Errorf("users of a = %v", users)
	}
	if _, err := svc.SignIn(ctx, "grace@example.com", "password2", "192.0.2.1"); err != nil {
		t.Errorf("the added user cannot sign in: %v", err)
	}
}

func mustKey(t *testing.T, svc *service.Service, accountID int64) string {
	t.Helper()
	_, key, err := svc.CreateAPIKey(context.Background(), accountID, "")
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// A burst of guesses sent at once is throttled like guesses one by one:
// every attempt passed the limit's check before any failure was counted,
// so 200 parallel guesses got 200 tries and no 429. Now at most the
// hashing slots' (4) attempts pass the limit, and a right password at the
// end of the burst is refused too.
func TestLoginThrottlingHoldsForABurst(t *testing.T) {
	ctx := context.Background()
	svc, _ := openService(t, service.Options{})
	if _, err := svc.Setup(ctx, "ada@example.com", "correct horse", beet.PlanFree, ""); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[string]int{}
	for range 60 {
		wg.Go(func() {
			_, err := svc.SignIn(ctx, "ada@example.com", "guess", "192.0.2.7")
			mu.Lock()
			codes[code(err)]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if tried := codes[beet.EUNAUTHORIZED]; tried > 10+3 || codes[beet.ERATELIMITED] != 60-tried {
		t.Fatalf("60 parallel guesses: %v; want at most 13 tried, the rest rate_limited", codes)
	}
	if _, err := svc.SignIn(ctx, "ada@example.com", "correct horse", "192.0.2.8"); code(err) != beet.ERATELIMITED {
		t.Fatalf("right password after the burst: %v, want rate_limited", err)
	}
}
