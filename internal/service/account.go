package service

import (
	"context"
	"net/mail"
	"strings"
	"sync"

	"github.com/beethq/beet"
)

const maxEmailLen = 254 // RFC 5321's limit on a forward path

// CreateAccount creates an account on plan with its first user, and an API
// key for it. The key is returned once in plain text; only its hash is kept.
func (s *Service) CreateAccount(ctx context.Context, email, password string, plan beet.Plan) (*beet.Account, string, error) {
	email, err := normaliseEmail(email)
	if err != nil {
		return nil, "", err
	}
	if err := validatePassword(password); err != nil {
		return nil, "", err
	}
	if !plan.Valid() {
		return nil, "", beet.FieldError("plan", "unknown plan %q (want free, starter, pro or enterprise)", plan)
	}
	now := s.Now()
	a := &beet.Account{Plan: plan, CreatedAt: now}
	u := &beet.User{Email: email, PasswordHash: HashPassword(password, s.pw), CreatedAt: now}
	if err := s.store.CreateAccount(ctx, a, u); err != nil {
		if beet.ErrorCode(err) == beet.ECONFLICT {
			return nil, "", &beet.Error{Code: beet.ECONFLICT, Field: "email", Message: "an account with this email already exists"}
		}
		return nil, "", err
	}
	_, key, err := s.CreateAPIKey(ctx, a.ID, "default")
	if err != nil {
		return nil, "", err
	}
	s.log.Info("account created", "account_id", a.ID, "plan", plan)
	return a, key, nil
}

// ListAccounts lists every account (an operator's view, for the CLI).
func (s *Service) ListAccounts(ctx context.Context) ([]*beet.Account, error) {
	return s.store.FindAccounts(ctx)
}

// Account returns one account.
func (s *Service) Account(ctx context.Context, id int64) (*beet.Account, error) {
	return s.store.FindAccountByID(ctx, id)
}

// SetPlan moves an account to another plan. A shorter retention takes
// effect on the next clean-up pass.
func (s *Service) SetPlan(ctx context.Context, accountID int64, plan beet.Plan) error {
	if !plan.Valid() {
		return beet.FieldError("plan", "unknown plan %q (want free, starter, pro or enterprise)", plan)
	}
	if err := s.store.SetAccountPlan(ctx, accountID, plan); err != nil {
		return err
	}
	s.log.Info("plan changed", "account_id", accountID, "plan", plan)
	return nil
}

// Authenticate returns the user with that email and password. Unknown
// emails cost the same hash as wrong passwords, so timing does not tell
// which emails have accounts.
func (s *Service) Authenticate(ctx context.Context, email, password string) (*beet.User, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	u, err := s.store.FindUserByEmail(ctx, email)
	if err != nil && !beet.IsNotFound(err) {
		return nil, err
	}
	if u == nil {
		CheckPassword(password, dummyHash())
		return nil, beet.Errorf(beet.EUNAUTHORIZED, "wrong email or password")
	}
	if !CheckPassword(password, u.PasswordHash) {
		return nil, beet.Errorf(beet.EUNAUTHORIZED, "wrong email or password")
	}
	return u, nil
}

// dummyHash is checked against for unknown emails; made on first use so
// that commands which never sign anyone in do not pay for a hash.
var dummyHash = sync.OnceValue(func() string { return HashPassword("not a password", DefaultPasswordParams) })

func normaliseEmail(email string) (string, error) {
	email = strings.TrimSpace(email)
	if email == "" {
		return "", beet.FieldError("email", "is required")
	}
	if len(email) > maxEmailLen {
		return "", beet.FieldError("email", "is longer than %d characters", maxEmailLen)
	}
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Address != email || addr.Name != "" {
		return "", beet.FieldError("email", "%q is not an email address", email)
	}
	return strings.ToLower(email), nil
}

func validatePassword(pw string) error {
	if len([]rune(pw)) < minPasswordLen {
		return beet.FieldError("password", "must be at least %d characters", minPasswordLen)
	}
	if len(pw) > maxPasswordLen {
		return beet.FieldError("password", "must be at most %d bytes", maxPasswordLen)
	}
	return nil
}

// SingleAccount reports whether the installation has exactly one account:
// then whoever is signed in runs it, and may see everything about
// requests that matched no beet (client addresses included).
func (s *Service) SingleAccount(ctx context.Context) (bool, error) {
	accts, err := s.store.FindAccounts(ctx)
	if err != nil {
		return false, err
	}
	return len(accts) == 1, nil
}
