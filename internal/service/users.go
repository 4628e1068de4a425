package service

import (
	"context"
	"strconv"
	"strings"

	"github.com/beethq/beet"
)

// SetAccountTimezone sets the zone the account's new beets take.
func (s *Service) SetAccountTimezone(ctx context.Context, accountID int64, tz string) error {
	tz = strings.TrimSpace(tz)
	if err := beet.ValidateTimezone("timezone", tz); err != nil {
		return err
	}
	return s.store.SetAccountTimezone(ctx, accountID, tz)
}

// ChangePassword sets a signed-in user's password after checking the
// current one, under sign-in's limit on failures for the user's email.
// Every other session of the user ends; keep (the hash of the session
// making the change) stays signed in.
func (s *Service) ChangePassword(ctx context.Context, userID int64, current, next string, keep []byte) error {
	u, err := s.store.FindUserByID(ctx, userID)
	if err != nil {
		return err
	}
	err = s.throttled(ctx, normaliseLoginEmail(u.Email), "", func() error {
		if len(current) > maxPasswordLen || !CheckPassword(current, u.PasswordHash) {
			return beet.Errorf(beet.EUNAUTHORIZED, "wrong password")
		}
		return nil
	})
	if beet.ErrorCode(err) == beet.EUNAUTHORIZED {
		return beet.FieldError("current", "is not your current password")
	} else if err != nil {
		return err
	}
	if err := validatePassword(next); err != nil {
		return err
	}
	if err := s.store.SetUserPassword(ctx, userID, s.hashPassword(next), keep); err != nil {
		return err
	}
	s.log.Info("password changed", "account_id", u.AccountID, "user_id", u.ID)
	return nil
}

// SetPassword is an operator's reset (`beet accounts set-password`): it
// sets the password of the user with that email without the old one, and
// ends all of the user's sessions.
func (s *Service) SetPassword(ctx context.Context, email, password string) (*beet.User, error) {
	u, err := s.store.FindUserByEmail(ctx, strings.TrimSpace(email))
	if err != nil {
		return nil, err
	}
	if err := validatePassword(password); err != nil {
		return nil, err
	}
	if err := s.store.SetUserPassword(ctx, u.ID, s.hashPassword(password), nil); err != nil {
		return nil, err
	}
	s.log.Info("password reset by an operator", "account_id", u.AccountID, "user_id", u.ID)
	return u, nil
}

// RemoveUser removes one of the account's users, who is signed out at
// once. A person does not remove themselves (another user, or the CLI,
// does), and the last user stays.
func (s *Service) RemoveUser(ctx context.Context, accountID, byUserID, userID int64) error {
	if userID == byUserID {
		return beet.Errorf(beet.ECONFLICT, "you cannot remove yourself; another user of the account can")
	}
	if err := s.store.DeleteUser(ctx, accountID, userID); err != nil {
		return err
	}
	s.log.Info("user removed", "account_id", accountID, "user_id", userID, "by_user_id", byUserID)
	return nil
}

// RemoveUserByEmail is an operator's removal (`beet accounts remove-user`):
// the user with that email goes, with their sessions, so they are signed
// out at once. The account's last user stays (ECONFLICT).
func (s *Service) RemoveUserByEmail(ctx context.Context, email string) (*beet.User, error) {
	u, err := s.store.FindUserByEmail(ctx, strings.TrimSpace(email))
	if err != nil {
		return nil, err
	}
	if err := s.store.DeleteUser(ctx, u.AccountID, u.ID); err != nil {
		return nil, err
	}
	s.log.Info("user removed by an operator", "account_id", u.AccountID, "user_id", u.ID)
	return u, nil
}

// Users lists the account's users.
func (s *Service) Users(ctx context.Context, accountID int64) ([]*beet.User, error) {
	return s.store.FindUsers(ctx, accountID)
}

// AddUser adds a person who can sign in to the account.
func (s *Service) AddUser(ctx context.Context, accountID int64, email, password string) (*beet.User, error) {
	email, err := normaliseEmail(email)
	if err != nil {
		return nil, err
	}
	if err := validatePassword(password); err != nil {
		return nil, err
	}
	if users, err := s.store.FindUsers(ctx, accountID); err != nil {
		return nil, err
	} else if len(users) >= beet.MaxUsersPerAccount {
		return nil, beet.Errorf(beet.ECONFLICT, "an account has at most %d users; remove one first", beet.MaxUsersPerAccount)
	}
	// "Already has a user" tells whether an email is registered anywhere:
	// those answers count against a throttle per account, so a member
	// cannot sweep a list of emails through this form.
	key := "add-user:" + strconv.FormatInt(accountID, 10)
	now := s.now()
	if err := s.logins.check(now, key, ""); err != nil {
		return nil, err
	}
	u := &beet.User{AccountID: accountID, Email: email, PasswordHash: s.hashPassword(password), CreatedAt: s.Now()}
	if err := s.store.AddUser(ctx, u); err != nil {
		if beet.ErrorCode(err) == beet.ECONFLICT {
			s.logins.fail(now, key, "")
			return nil, &beet.Error{Code: beet.ECONFLICT, Field: "email", Message: "this email address already has a user"}
		}
		return nil, err
	}
	s.log.Info("user added", "account_id", accountID, "user_id", u.ID)
	return u, nil
}
