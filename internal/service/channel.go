package service

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
)

// NotifyOptions connects the service to the delivery side; the app sets it
// once, before serving.
type NotifyOptions struct {
	// CheckTarget refuses a channel URL that resolves to a private address
	// (unless the operator allows them); nil checks nothing.
	CheckTarget func(ctx context.Context, url string) error
	// EmailEnabled says whether BEET_SMTP_URL is set: without it, email
	// channels could never send, so they are refused.
	EmailEnabled bool
	// DeliverNow sends a pending delivery at once (test messages); nil
	// leaves it to the worker.
	DeliverNow func(ctx context.Context, id int64) (*beet.Delivery, error)
}

// SetNotify sets how channels are checked and test messages sent.
func (s *Service) SetNotify(opts NotifyOptions) { s.notify = opts }

// ChannelInput is what a person gives to create a channel.
type ChannelInput struct {
	Kind          beet.ChannelKind
	Name          string
	Config        beet.ChannelConfig
	ReminderEvery time.Duration
}

// CreateChannel creates a channel for the account; it serves every beet of
// the account from the start (a beet's channels can be narrowed after).
func (s *Service) CreateChannel(ctx context.Context, accountID int64, in ChannelInput) (*beet.Channel, error) {
	now := s.Now()
	c := &beet.Channel{AccountID: accountID, Kind: in.Kind, Name: strings.TrimSpace(in.Name), Config: in.Config,
		ReminderEvery: in.ReminderEvery, CreatedAt: now, UpdatedAt: now}
	if err := s.checkChannel(ctx, c); err != nil {
		return nil, err
	}
	existing, err := s.store.FindChannels(ctx, accountID)
	if err != nil {
		return nil, err
	}
	if len(existing) >= beet.MaxChannelsPerAccount {
		return nil, beet.Errorf(beet.ECONFLICT, "an account has at most %d channels", beet.MaxChannelsPerAccount)
	}
	if err := s.store.CreateChannel(ctx, c); err != nil {
		return nil, err
	}
	s.log.Info("channel created", "account_id", accountID, "channel_id", c.ID, "kind", c.Kind)
	return c, nil
}

func (s *Service) checkChannel(ctx context.Context, c *beet.Channel) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if c.Kind == beet.ChannelEmail && !s.notify.EmailEnabled {
		return beet.FieldError("kind", "email channels need a mail server: the operator sets BEET_SMTP_URL")
	}
	if c.Config.URL != "" && s.notify.CheckTarget != nil {
		return s.notify.CheckTarget(ctx, c.Config.URL)
	}
	return nil
}

// Channel returns the account's channel; another account's is not found.
func (s *Service) Channel(ctx context.Context, accountID, id int64) (*beet.Channel, error) {
	c, err := s.store.FindChannelByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if c.AccountID != accountID {
		return nil, beet.Errorf(beet.ENOTFOUND, "channel %d not found", id)
	}
	return c, nil
}

// Channels lists the account's channels, oldest first.
func (s *Service) Channels(ctx context.Context, accountID int64) ([]*beet.Channel, error) {
	return s.store.FindChannels(ctx, accountID)
}

// UpdateChannel changes the account's channel; the result is validated
// (and its URL checked) as a whole before anything is written.
func (s *Service) UpdateChannel(ctx context.Context, accountID, id int64, upd beet.ChannelUpdate) (*beet.Channel, error) {
	c, err := s.Channel(ctx, accountID, id)
	if err != nil {
		return nil, err
	}
	if upd.Name != nil {
		name := strings.TrimSpace(*upd.Name)
		upd.Name = &name
	}
	next := upd.Apply(*c)
	if err := s.checkChannel(ctx, &next); err != nil {
		return nil, err
	}
	return s.store.UpdateChannel(ctx, id, upd, s.Now())
}

// DeleteChannel deletes the account's channel with its delivery log.
func (s *Service) DeleteChannel(ctx context.Context, accountID, id int64) error {
	if _, err := s.Channel(ctx, accountID, id); err != nil {
		return err
	}
	if err := s.store.DeleteChannel(ctx, id); err != nil {
		return err
	}
	s.log.Info("channel deleted", "account_id", accountID, "channel_id", id)
	return nil
}

// TestChannel sends a test message through the channel now, and returns
// the delivery as recorded (delivered, or pending with the error when the
// receiver failed and a retry is scheduled).
func (s *Service) TestChannel(ctx context.Context, accountID, id int64) (*beet.Delivery, error) {
	if _, err := s.Channel(ctx, accountID, id); err != nil {
		return nil, err
	}
	if err := s.checkTestRate(ctx, id); err != nil {
		return nil, err
	}
	d := &beet.Delivery{ChannelID: id, Event: beet.EventTest, CreatedAt: s.Now()}
	if err := s.store.CreateDelivery(ctx, d); err != nil {
		return nil, err
	}
	if s.notify.DeliverNow == nil {
		return d, nil
	}
	sent, err := s.notify.DeliverNow(ctx, d.ID)
	if beet.ErrorCode(err) != beet.ECONFLICT {
		return sent, err
	}
	// A worker's poll claimed it first: wait for that worker's result.
	deadline := time.Now().Add(time.Minute) // real time: a test clock may stand still
	for {
		got, err := s.store.FindDeliveryByID(ctx, d.ID)
		if err != nil || got.LastAt != nil || got.Status != beet.DeliveryPending || time.Now().After(deadline) {
			return got, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// channelTests is how many test messages a channel sends in
// channelTestWindow: a test goes wherever the channel points (an email
// channel, any address), so unbounded tests would make Beet a relay.
const (
	channelTests      = 10
	channelTestWindow = time.Hour
)

// checkTestRate refuses a test past channelTests in channelTestWindow,
// counted from the channel's delivery log (so every instance sees them).
func (s *Service) checkTestRate(ctx context.Context, id int64) error {
	recent, err := s.store.FindDeliveries(ctx, id, beet.MaxPageLimit)
	if err != nil {
		return err
	}
	now := s.Now()
	since, n := now.Add(-channelTestWindow), 0
	for _, d := range recent { // newest first
		if d.Event == beet.EventTest && d.CreatedAt.After(since) {
			n++
			if n == channelTests {
				// A test is taken again once this one, the 10th newest,
				// is an hour old.
				wait := d.CreatedAt.Add(channelTestWindow).Sub(now)
				return beet.RateLimited(wait, "a channel sends at most %d tests an hour; try again in %s", channelTests,
					detect.Duration(wait.Truncate(time.Minute)+time.Minute))
			}
		}
	}
	return nil
}

// Deliveries returns the channel's delivery log, newest first.
func (s *Service) Deliveries(ctx context.Context, accountID, id int64, limit int) ([]*beet.Delivery, error) {
	if _, err := s.Channel(ctx, accountID, id); err != nil {
		return nil, err
	}
	if err := checkPage(limit, 0); err != nil {
		return nil, err
	}
	return s.store.FindDeliveries(ctx, id, limit)
}

// BeetChannels returns the IDs of the channels the account's beet notifies.
func (s *Service) BeetChannels(ctx context.Context, accountID, beetID int64) ([]int64, error) {
	if _, err := s.Beet(ctx, accountID, beetID); err != nil {
		return nil, err
	}
	return s.store.BeetChannels(ctx, beetID)
}

// SetBeetChannels chooses which of the account's channels the beet
// notifies; an empty list silences it.
func (s *Service) SetBeetChannels(ctx context.Context, accountID, beetID int64, ids []int64) ([]int64, error) {
	if _, err := s.Beet(ctx, accountID, beetID); err != nil {
		return nil, err
	}
	if len(ids) > beet.MaxChannelsPerAccount {
		return nil, beet.FieldError("channels", "at most %d channels", beet.MaxChannelsPerAccount)
	}
	if err := s.store.SetBeetChannels(ctx, beetID, ids); err != nil {
		return nil, err
	}
	return s.store.BeetChannels(ctx, beetID)
}

// checkChannelIDs refuses IDs that are not channels of the account, before
// anything is written.
func (s *Service) checkChannelIDs(ctx context.Context, accountID int64, ids []int64) error {
	if len(ids) > beet.MaxChannelsPerAccount {
		return beet.FieldError("channels", "at most %d channels", beet.MaxChannelsPerAccount)
	}
	cs, err := s.store.FindChannels(ctx, accountID)
	if err != nil {
		return err
	}
	mine := map[int64]bool{}
	for _, c := range cs {
		mine[c.ID] = true
	}
	for _, id := range ids {
		if !mine[id] {
			return &beet.Error{Code: beet.ENOTFOUND, Field: "channels", Message: "channel " + strconv.FormatInt(id, 10) + " not found"}
		}
	}
	return nil
}

// applyChannels sets the beet's channels when ids is not nil, and loads
// them into b.Channels.
func (s *Service) applyChannels(ctx context.Context, b *beet.Beet, ids *[]int64) error {
	if ids != nil {
		if err := s.store.SetBeetChannels(ctx, b.ID, *ids); err != nil {
			return err
		}
	}
	chans, err := s.store.BeetChannels(ctx, b.ID)
	if err != nil {
		return err
	}
	b.Channels = chans
	return nil
}

// fillChannels loads the channels of many beets in one read.
func (s *Service) fillChannels(ctx context.Context, beets []*beet.Beet) error {
	if len(beets) == 0 {
		return nil
	}
	ids := make([]int64, len(beets))
	for i, b := range beets {
		ids[i] = b.ID
	}
	m, err := s.store.ChannelsOfBeets(ctx, ids)
	if err != nil {
		return err
	}
	for _, b := range beets {
		b.Channels = m[b.ID]
		if b.Channels == nil {
			b.Channels = []int64{}
		}
	}
	return nil
}
