package service

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"time"

	"github.com/beethq/beet"
)

// Session lifetimes: a session ends after SessionIdle without use, and
// SessionMax after sign-in whatever happens.
const (
	SessionIdle = 7 * 24 * time.Hour
	SessionMax  = 30 * 24 * time.Hour
	// touchEvery bounds the writes a busy session costs: its last use is
	// saved at most once a minute, which is plenty for a 7-day idle limit.
	touchEvery = time.Minute
	// sessionIDLen is the random bytes in a session cookie.
	sessionIDLen = 32
	// pruneBatch bounds the expired sessions deleted at each sign-in.
	pruneBatch = 100
)

// SignedIn is what a successful sign-in hands back: the cookie value (the
// only copy; the store keeps its hash) and the session.
type SignedIn struct {
	Cookie  string
	Session *beet.Session
}

// SetupNeeded reports whether Beet has no account yet, so the dashboard
// should offer the first-run setup. Once false it stays false without a
// query.
func (s *Service) SetupNeeded(ctx context.Context) (bool, error) {
	if s.setupDone.Load() {
		return false, nil
	}
	exist, err := s.store.AccountsExist(ctx)
	if err != nil {
		return false, err
	}
	if exist {
		s.setupDone.Store(true)
	}
	return !exist, nil
}

// Setup creates the first account and its first user, and signs the user
// in. It fails with ECONFLICT once any account exists. timezone is the
// account's zone (the browser's, sent by the setup page); empty or unknown
// is UTC, so a browser with an odd zone never blocks the setup.
func (s *Service) Setup(ctx context.Context, email, password string, plan beet.Plan, timezone string) (*SignedIn, error) {
	a, u, err := s.newAccount(email, password, plan)
	if err != nil {
		return nil, err
	}
	if beet.ValidateTimezone("timezone", timezone) == nil {
		a.Timezone = timezone
	}
	if err := s.store.CreateFirstAccount(ctx, a, u); err != nil {
		return nil, err
	}
	s.setupDone.Store(true)
	s.log.Info("first-run setup done", "account_id", a.ID, "user_id", u.ID)
	return s.startSession(ctx, u)
}

// SignUp creates a new account (free plan) with its first user, and signs
// the user in. Whether sign-up is open is the caller's decision
// (BEET_SIGNUP); the caller's address is throttled like a failed sign-in.
func (s *Service) SignUp(ctx context.Context, email, password, ip string) (*SignedIn, error) {
	now := s.now()
	if err := s.logins.check(now, "", ip); err != nil {
		return nil, err
	}
	s.logins.fail(now, "", ip) // every sign-up counts, so one address cannot make thousands
	a, u, err := s.newAccount(email, password, beet.PlanFree)
	if err != nil {
		return nil, err
	}
	if err := s.store.CreateAccount(ctx, a, u); err != nil {
		if beet.ErrorCode(err) == beet.ECONFLICT {
			return nil, &beet.Error{Code: beet.ECONFLICT, Field: "email", Message: "an account with this email already exists; sign in instead"}
		}
		return nil, err
	}
	s.log.Info("account signed up", "account_id", a.ID)
	return s.startSession(ctx, u)
}

func (s *Service) newAccount(email, password string, plan beet.Plan) (*beet.Account, *beet.User, error) {
	email, err := normaliseEmail(email)
	if err != nil {
		return nil, nil, err
	}
	if err := validatePassword(password); err != nil {
		return nil, nil, err
	}
	if !plan.Valid() {
		return nil, nil, beet.FieldError("plan", "unknown plan %q (want free, starter, pro or enterprise)", plan)
	}
	now := s.Now()
	return &beet.Account{Plan: plan, CreatedAt: now},
		&beet.User{Email: email, PasswordHash: s.hashPassword(password), CreatedAt: now}, nil
}

// SignIn checks the email and password and starts a session. ip is the
// client's address, for throttling; repeated failures for one email or one
// address are refused with ERATELIMITED for a while.
func (s *Service) SignIn(ctx context.Context, email, password, ip string) (*SignedIn, error) {
	if len(password) > maxPasswordLen {
		return nil, beet.Errorf(beet.EUNAUTHORIZED, "wrong email or password")
	}
	var u *beet.User
	err := s.throttled(ctx, normaliseLoginEmail(email), ip, func() (err error) {
		u, err = s.Authenticate(ctx, email, password)
		return err
	})
	if beet.ErrorCode(err) == beet.EUNAUTHORIZED {
		s.log.Info("sign-in failed", "ip", ip)
		return nil, err
	} else if err != nil {
		return nil, err
	}
	// Sign-ins are rare, so they carry the clean-up of old sessions.
	if n, err := s.store.DeleteExpiredSessions(ctx, s.Now(), s.Now().Add(-SessionIdle), pruneBatch); err != nil {
		s.log.Warn("pruning expired sessions failed", "err", err)
	} else if n > 0 {
		s.log.Debug("expired sessions pruned", "count", n)
	}
	return s.startSession(ctx, u)
}

func (s *Service) startSession(ctx context.Context, u *beet.User) (*SignedIn, error) {
	raw := make([]byte, sessionIDLen)
	rand.Read(raw)
	cookie := base64.RawURLEncoding.EncodeToString(raw)
	now := s.Now()
	sess := &beet.Session{IDHash: hashSession(cookie), UserID: u.ID, AccountID: u.AccountID,
		CreatedAt: now, LastSeenAt: now, ExpiresAt: now.Add(SessionMax)}
	if err := s.store.CreateSession(ctx, sess); err != nil {
		return nil, err
	}
	s.log.Info("signed in", "account_id", u.AccountID, "user_id", u.ID)
	return &SignedIn{Cookie: cookie, Session: sess}, nil
}

// SessionFor returns the live session of a cookie value, or EUNAUTHORIZED
// for an unknown, expired or idle one (which it deletes).
func (s *Service) SessionFor(ctx context.Context, cookie string) (*beet.Session, error) {
	if len(cookie) != base64.RawURLEncoding.EncodedLen(sessionIDLen) {
		return nil, beet.Errorf(beet.EUNAUTHORIZED, "not signed in")
	}
	h := hashSession(cookie)
	sess, err := s.store.FindSessionByHash(ctx, h)
	if beet.IsNotFound(err) {
		return nil, beet.Errorf(beet.EUNAUTHORIZED, "not signed in")
	} else if err != nil {
		return nil, err
	}
	now := s.Now()
	if !now.Before(sess.ExpiresAt) || !now.Before(sess.LastSeenAt.Add(SessionIdle)) {
		if err := s.store.DeleteSession(ctx, h); err != nil {
			s.log.Warn("deleting an expired session failed", "err", err)
		}
		return nil, beet.Errorf(beet.EUNAUTHORIZED, "your session has expired; sign in again")
	}
	if now.Sub(sess.LastSeenAt) >= touchEvery {
		if err := s.store.TouchSession(ctx, h, now); err != nil {
			s.log.Warn("saving a session's last use failed", "err", err)
		}
		sess.LastSeenAt = now
	}
	return sess, nil
}

// SignOut ends the session of a cookie value; an unknown one is fine.
func (s *Service) SignOut(ctx context.Context, cookie string) error {
	return s.store.DeleteSession(ctx, hashSession(cookie))
}

func hashSession(cookie string) []byte {
	h := sha256.Sum256([]byte(cookie))
	return h[:]
}

func (s *Service) hashPassword(pw string) string {
	s.hashing <- struct{}{}
	defer func() { <-s.hashing }()
	return HashPassword(pw, s.pw)
}

// hashingSlots bounds concurrent password hashes (64 MiB each).
const hashingSlots = 4
