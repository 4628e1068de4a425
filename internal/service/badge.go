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
