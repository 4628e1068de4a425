package service

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
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
// current one. Every other session of the user ends; keep (the hash of the
// session making the change) stays signed in.
func (s *Service) ChangePassword(ctx context.Context, userID int64, current, next string, keep []byte) error {
	u, err := s.store.FindUserByID(ctx, userID)
	if err != nil {
		return err
	}
	s.hashing <- struct{}{}
	ok := len(current) <= maxPasswordLen && CheckPassword(current, u.PasswordHash)
	<-s.hashing
	if !ok {
		return beet.FieldError("current", "is not your current password")
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

// SetBeetTags replaces the tags of the account's beet; tags is what a
// person typed ("prod, billing").
func (s *Service) SetBeetTags(ctx context.Context, accountID, id int64, tags string) ([]string, error) {
	parsed, err := beet.ParseTags("tags", tags)
	if err != nil {
		return nil, err
	}
	if _, err := s.Beet(ctx, accountID, id); err != nil {
		return nil, err
	}
	return parsed, s.store.SetBeetTags(ctx, id, parsed)
}

// SetBeetTagList replaces the tags of the account's beet with a list (the
// API), checked by beet.CleanTags.
func (s *Service) SetBeetTagList(ctx context.Context, accountID, id int64, tags []string) ([]string, error) {
	clean, err := beet.CleanTags("tags", tags)
	if err != nil {
		return nil, err
	}
	if _, err := s.Beet(ctx, accountID, id); err != nil {
		return nil, err
	}
	return clean, s.store.SetBeetTags(ctx, id, clean)
}

// FillTags loads the tags of beets the caller already holds (so already
// scoped to its account).
func (s *Service) FillTags(ctx context.Context, beets ...*beet.Beet) error {
	ids := make([]int64, len(beets))
	for i, b := range beets {
		ids[i] = b.ID
	}
	tags, err := s.store.FindBeetTags(ctx, ids)
	if err != nil {
		return err
	}
	for _, b := range beets {
		b.Tags = tags[b.ID]
	}
	return nil
}

// AccountTags lists every tag of the account's beets.
func (s *Service) AccountTags(ctx context.Context, accountID int64) ([]string, error) {
	return s.store.FindAccountTags(ctx, accountID)
}

// Status badges. A badge URL is /badge/<id>.svg; the id names a beet
// ("b17") or a tag of an account ("t3.prod") and carries an HMAC of that
// name under the account's badge key, so one badge URL does not lead to
// another beet's and nobody can make one up. Resetting the key retires
// every badge URL of the account.
const badgeMACLen = 16 // bytes: 128 bits

// BadgeIDs returns the badge IDs of the account's beet and of each tag
// given, creating the account's badge key on first use.
func (s *Service) BadgeIDs(ctx context.Context, accountID int64, beetIDs []int64, tags []string) (beets map[int64]string, byTag map[string]string, err error) {
	key, err := s.badgeKey(ctx, accountID)
	if err != nil {
		return nil, nil, err
	}
	beets, byTag = map[int64]string{}, map[string]string{}
	for _, id := range beetIDs {
		name := "b" + strconv.FormatInt(id, 10)
		beets[id] = name + "-" + badgeMAC(key, name)
	}
	for _, t := range tags {
		name := "t" + strconv.FormatInt(accountID, 10) + "." + t
		byTag[t] = name + "-" + badgeMAC(key, name)
	}
	return beets, byTag, nil
}

// ResetBadgeKey gives the account a new badge key: every badge URL handed
// out so far stops working.
func (s *Service) ResetBadgeKey(ctx context.Context, accountID int64) error {
	a, err := s.store.FindAccountByID(ctx, accountID)
	if err != nil {
		return err
	}
	if _, err := s.store.SetAccountBadgeKey(ctx, accountID, a.BadgeKey, newBadgeKey()); err != nil {
		return err
	}
	s.log.Info("badge key reset", "account_id", accountID)
	return nil
}

func (s *Service) badgeKey(ctx context.Context, accountID int64) (string, error) {
	for range 3 {
		a, err := s.store.FindAccountByID(ctx, accountID)
		if err != nil {
			return "", err
		}
		if a.BadgeKey != "" {
			return a.BadgeKey, nil
		}
		// Two first badges at once: one key wins, the other reads it.
		if _, err := s.store.SetAccountBadgeKey(ctx, accountID, "", newBadgeKey()); err != nil {
			return "", err
		}
	}
	return "", beet.Errorf(beet.EINTERNAL, "badge key of account %d did not settle", accountID)
}

func newBadgeKey() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func badgeMAC(key, name string) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(name))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:badgeMACLen])
}

// Badge is what a status badge shows.
type Badge struct {
	Label  string
	Status beet.Status
}

// BadgeFor resolves a badge ID. A tag's badge shows its worst beet (down
// before anomalous before learning, new and up; paused only when all are).
// Anything wrong, forged or retired is ENOTFOUND, with no hint which.
func (s *Service) BadgeFor(ctx context.Context, id string) (*Badge, error) {
	notFound := beet.Errorf(beet.ENOTFOUND, "no such badge")
	name, mac, ok := strings.Cut(id, "-")
	if !ok || len(name) < 2 || len(id) > 200 {
		return nil, notFound
	}
	var accountID, beetID int64
	var tag string
	var err error
	switch name[0] {
	case 'b':
		if beetID, err = strconv.ParseInt(name[1:], 10, 64); err != nil {
			return nil, notFound
		}
		b, err := s.store.FindBeetByID(ctx, beetID)
		if beet.IsNotFound(err) {
			return nil, notFound
		} else if err != nil {
			return nil, err
		}
		accountID = b.AccountID
		if !s.badgeValid(ctx, accountID, name, mac) {
			return nil, notFound
		}
		return &Badge{Label: b.Name, Status: b.Status}, nil
	case 't':
		acc, t, ok := strings.Cut(name[1:], ".")
		if accountID, err = strconv.ParseInt(acc, 10, 64); !ok || err != nil || beet.ValidateTag("tag", t) != nil {
			return nil, notFound
		}
		tag = t
	default:
		return nil, notFound
	}
	if !s.badgeValid(ctx, accountID, name, mac) {
		return nil, notFound
	}
	beets, total, err := s.store.FindBeets(ctx, beet.BeetFilter{AccountID: &accountID, Tag: tag, Order: beet.OrderStatus, Limit: 1})
	if err != nil {
		return nil, err
	}
	if total == 0 {
		return &Badge{Label: tag, Status: beet.StatusNew}, nil
	}
	return &Badge{Label: tag, Status: beets[0].Status}, nil
}

func (s *Service) badgeValid(ctx context.Context, accountID int64, name, mac string) bool {
	a, err := s.store.FindAccountByID(ctx, accountID)
	if err != nil || a.BadgeKey == "" {
		return false
	}
	return hmac.Equal([]byte(mac), []byte(badgeMAC(a.BadgeKey, name)))
}
