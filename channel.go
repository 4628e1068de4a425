package beet

import (
	"context"
	"net/mail"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// ChannelKind is how a channel reaches people (CONTRACT §2).
type ChannelKind string

const (
	ChannelWebhook   ChannelKind = "webhook"
	ChannelEmail     ChannelKind = "email"
	ChannelSlack     ChannelKind = "slack"
	ChannelDiscord   ChannelKind = "discord"
	ChannelTeams     ChannelKind = "teams"
	ChannelPagerDuty ChannelKind = "pagerduty"
	ChannelNtfy      ChannelKind = "ntfy"

	// The kinds below are configured by one service URL in config.url, in
	// the form of the shoutrrr library (its scheme is the kind's name), and
	// sent through that library (internal/notify).
	ChannelTelegram   ChannelKind = "telegram"
	ChannelPushover   ChannelKind = "pushover"
	ChannelGotify     ChannelKind = "gotify"
	ChannelMatrix     ChannelKind = "matrix"
	ChannelMattermost ChannelKind = "mattermost"
	ChannelGoogleChat ChannelKind = "googlechat"
	ChannelZulip      ChannelKind = "zulip"
	ChannelOpsgenie   ChannelKind = "opsgenie"
	ChannelRocketChat ChannelKind = "rocketchat"
)

// ChannelKinds lists every kind.
var ChannelKinds = []ChannelKind{ChannelWebhook, ChannelEmail, ChannelSlack, ChannelDiscord, ChannelTeams, ChannelPagerDuty, ChannelNtfy,
	ChannelTelegram, ChannelPushover, ChannelGotify, ChannelMatrix, ChannelMattermost, ChannelGoogleChat, ChannelZulip, ChannelOpsgenie, ChannelRocketChat}

// ServiceURLKinds are the kinds configured by a service URL.
var ServiceURLKinds = []ChannelKind{ChannelTelegram, ChannelPushover, ChannelGotify, ChannelMatrix, ChannelMattermost,
	ChannelGoogleChat, ChannelZulip, ChannelOpsgenie, ChannelRocketChat}

// ChannelConfig is the settings of a channel; which fields a kind takes is
// pinned by the contract: webhook {url, secret?}, email {to}, pagerduty
// {routing_key}, the others {url} (a service URL for ServiceURLKinds).
type ChannelConfig struct {
	URL        string `json:"url,omitempty"`
	Secret     string `json:"secret,omitempty"`
	To         string `json:"to,omitempty"`
	RoutingKey string `json:"routing_key,omitempty"`
}

// Channel is one way an account is told about its beets' flips.
type Channel struct {
	ID        int64
	AccountID int64
	Kind      ChannelKind
	Name      string
	Config    ChannelConfig
	// ReminderEvery repeats the last alert while a beet stays down or
	// anomalous; 0 sends none.
	ReminderEvery time.Duration
	// FailingSince is set when a delivery was refused for good (a 4xx that
	// retrying cannot fix); the next success clears it.
	FailingSince  *time.Time
	FailingReason string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Limits on channels.
const (
	MaxChannelURLLen      = 2000
	MaxChannelSecretLen   = 200
	MaxChannelsPerAccount = 100
	MinReminderEvery      = 15 * time.Minute
	MaxReminderEvery      = 7 * 24 * time.Hour
)

// Valid reports whether k is a known kind.
func (k ChannelKind) Valid() bool {
	for _, c := range ChannelKinds {
		if k == c {
			return true
		}
	}
	return false
}

// ServiceURL reports whether k is configured by a service URL
// ("gotify://host/token"), whose scheme is the kind's name.
func (k ChannelKind) ServiceURL() bool {
	for _, c := range ServiceURLKinds {
		if k == c {
			return true
		}
	}
	return false
}

// Validate checks a channel as a person set it. Whether a URL's host is a
// private address needs DNS, so the caller checks that separately.
func (c *Channel) Validate() error {
	if !c.Kind.Valid() {
		return FieldError("kind", "%q is not a channel kind; use one of %s", c.Kind, kindList())
	}
	if err := ValidateName(c.Name); err != nil {
		return err
	}
	if c.ReminderEvery != 0 && (c.ReminderEvery < MinReminderEvery || c.ReminderEvery > MaxReminderEvery) {
		return FieldError("reminder_every_seconds", "must be 0 (off) or from %d to %d", int(MinReminderEvery.Seconds()), int(MaxReminderEvery.Seconds()))
	}
	cfg := c.Config
	// Each kind takes only its own fields, so a typo is an error rather
	// than a silently ignored setting.
	unexpected := func(field, v string) error {
		if v != "" {
			return FieldError("config."+field, "is not a setting of a %s channel", c.Kind)
		}
		return nil
	}
	switch c.Kind {
	case ChannelEmail:
		if cfg.To == "" {
			return FieldError("config.to", "is required")
		}
		a, err := mail.ParseAddress(cfg.To)
		if err != nil || a.Name != "" || a.Address != cfg.To || len(cfg.To) > 254 {
			return FieldError("config.to", "%q is not an email address", cfg.To)
		}
		return firstErr(unexpected("url", cfg.URL), unexpected("secret", cfg.Secret), unexpected("routing_key", cfg.RoutingKey))
	case ChannelPagerDuty:
		if n := len(cfg.RoutingKey); n == 0 {
			return FieldError("config.routing_key", "is required")
		} else if n != 32 || !alnum(cfg.RoutingKey) {
			return FieldError("config.routing_key", "must be the 32-character integration key of a PagerDuty Events API v2 integration")
		}
		return firstErr(unexpected("url", cfg.URL), unexpected("secret", cfg.Secret), unexpected("to", cfg.To))
	}
	if c.Kind.ServiceURL() {
		if err := ValidateServiceURL(c.Kind, cfg.URL); err != nil {
			return err
		}
		return firstErr(unexpected("secret", cfg.Secret), unexpected("to", cfg.To), unexpected("routing_key", cfg.RoutingKey))
	}
	if err := ValidateTargetURL("config.url", cfg.URL); err != nil {
		return err
	}
	if c.Kind == ChannelWebhook {
		if len(cfg.Secret) > MaxChannelSecretLen || !utf8.ValidString(cfg.Secret) {
			return FieldError("config.secret", "must be at most %d bytes of text", MaxChannelSecretLen)
		}
	} else if err := unexpected("secret", cfg.Secret); err != nil {
		return err
	}
	return firstErr(unexpected("to", cfg.To), unexpected("routing_key", cfg.RoutingKey))
}

func kindList() string {
	names := make([]string, len(ChannelKinds))
	for i, k := range ChannelKinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// ValidateServiceURL checks the shape of a service URL: its scheme is the
// kind's name and it fits the limits. What each service needs in it (a
// token, a room) the notify package checks with the library that sends.
// Errors never repeat the URL: it holds the secret.
func ValidateServiceURL(kind ChannelKind, s string) error {
	if s == "" {
		return FieldError("config.url", "is required: the %s service URL, such as %s", kind, ServiceURLExample(kind))
	}
	if len(s) > MaxChannelURLLen {
		return FieldError("config.url", "is %d bytes long; at most %d are allowed", len(s), MaxChannelURLLen)
	}
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return FieldError("config.url", "must be printable text")
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != string(kind) || u.Host == "" {
		return FieldError("config.url", "must be a %s:// URL, such as %s", kind, ServiceURLExample(kind))
	}
	return nil
}

// ServiceURLExample is a made-up URL of the kind's form, for help texts.
func ServiceURLExample(kind ChannelKind) string {
	switch kind {
	case ChannelTelegram:
		return "telegram://123456789:AAHexampletokenexampletokenexample@telegram?chats=@mychannel,-1001234567890"
	case ChannelPushover:
		return "pushover://shoutrrr:APP_TOKEN@USER_KEY/?devices=phone"
	case ChannelGotify:
		return "gotify://gotify.example.com/AexampleToken12"
	case ChannelMatrix:
		return "matrix://:ACCESS_TOKEN@matrix.example.com/?rooms=!roomid:example.com"
	case ChannelMattermost:
		return "mattermost://mattermost.example.com/WEBHOOK_TOKEN"
	case ChannelGoogleChat:
		return "googlechat://chat.googleapis.com/v1/spaces/SPACE/messages?key=KEY&token=TOKEN"
	case ChannelZulip:
		return "zulip://beet-bot%40example.zulipchat.com:BOT_API_KEY@example.zulipchat.com/?stream=alerts&topic=beet"
	case ChannelOpsgenie:
		return "opsgenie://api.opsgenie.com/API_KEY"
	case ChannelRocketChat:
		return "rocketchat://rocket.example.com/TOKEN_A/TOKEN_B"
	}
	return ""
}

func alnum(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// ValidateTargetURL checks that s is an absolute http(s) URL without user
// info, which is what every HTTP channel posts to.
func ValidateTargetURL(field, s string) error {
	if s == "" {
		return FieldError(field, "is required")
	}
	if len(s) > MaxChannelURLLen {
		return FieldError(field, "is %d bytes long; at most %d are allowed", len(s), MaxChannelURLLen)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" {
		return FieldError(field, "must be an absolute http:// or https:// URL")
	}
	if u.User != nil {
		return FieldError(field, "must not carry user info; put credentials in the path or a secret")
	}
	return nil
}

// Masked returns the config as the API shows it: secrets cut so that they
// can be recognised but not used. Webhook, chat and ntfy URLs carry their
// secret in the path, so only the scheme, host and a few characters show.
func (cfg ChannelConfig) Masked() ChannelConfig {
	out := cfg
	if cfg.URL != "" {
		out.URL = MaskURL(cfg.URL)
	}
	if cfg.Secret != "" {
		out.Secret = "********"
	}
	if cfg.RoutingKey != "" {
		out.RoutingKey = Redact(cfg.RoutingKey)
	}
	return out
}

// MaskURL keeps a URL's scheme and host and redacts the rest, for logs and
// API output. A service URL (telegram://, gotify://, ...) carries its
// tokens in the user info, the path or the query, and Pushover's user key
// in the host, so it shows only its scheme and a host that is a host name
// (one with a dot or a port); everything else becomes "…".
func MaskURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return Redact(s)
	}
	rest := strings.TrimPrefix(u.RequestURI(), "/")
	if u.Scheme != "http" && u.Scheme != "https" {
		host := u.Host
		if !strings.ContainsAny(host, ".:") && host != "localhost" && host != u.Scheme {
			host = "…"
		}
		if rest != "" || u.User != nil {
			rest = "…"
		}
		return u.Scheme + "://" + host + "/" + rest
	}
	if rest == "" {
		return u.Scheme + "://" + u.Host + "/"
	}
	return u.Scheme + "://" + u.Host + "/" + Redact(rest)
}

// ChannelUpdate changes a channel. A nil field means "unchanged"; a config
// field that is empty or equal to its masked form keeps the stored value,
// so a client may send back what it read.
type ChannelUpdate struct {
	Name          *string
	Config        *ChannelConfig
	ReminderEvery *time.Duration
}

// Apply returns c with upd applied.
func (upd ChannelUpdate) Apply(c Channel) Channel {
	if upd.Name != nil {
		c.Name = *upd.Name
	}
	if upd.ReminderEvery != nil {
		c.ReminderEvery = *upd.ReminderEvery
	}
	if n := upd.Config; n != nil {
		old, masked := c.Config, c.Config.Masked()
		keep := func(v, cur, m string) string {
			if v == "" || v == m {
				return cur
			}
			return v
		}
		c.Config = ChannelConfig{
			URL:        keep(n.URL, old.URL, masked.URL),
			Secret:     keep(n.Secret, old.Secret, masked.Secret),
			To:         keep(n.To, old.To, masked.To),
			RoutingKey: keep(n.RoutingKey, old.RoutingKey, masked.RoutingKey),
		}
	}
	return c
}

// DeliveryStatus is where a delivery stands.
type DeliveryStatus string

const (
	DeliveryPending    DeliveryStatus = "pending"    // waiting for its (next) attempt
	DeliveryDelivered  DeliveryStatus = "delivered"  // the receiver accepted it
	DeliveryFailed     DeliveryStatus = "failed"     // refused for good, or retried for 24 hours
	DeliverySuppressed DeliveryStatus = "suppressed" // not sent: maintenance or flapping
)

// Delivery events: what a message is about (the webhook's "event").
const (
	EventDown      = "beet.down"
	EventAnomalous = "beet.anomalous"
	EventUp        = "beet.up"
	EventTest      = "test"
	// EventPaused: a person paused a beet that was down or anomalous. The
	// message ends the incident (PagerDuty resolve) and says alerts are
	// off until the beet is resumed. Written with the pause flip.
	EventPaused = "beet.paused"
	// EventSettled: a beet reported flapping has not flipped for an hour.
	// It is sent as the event of the beet's state (beet.up, beet.down,
	// beet.anomalous or beet.paused) with "settled" set.
	EventSettled = "beet.settled"
)

// Delivery is one message to one channel: a row of the outbox. Flips
// create them in the transaction that records the flip; workers claim and
// send them.
type Delivery struct {
	ID        int64
	ChannelID int64
	BeetID    int64 // 0 for a test message
	FlipID    int64 // 0 for a test message
	// IncidentFlipID is the flip that opened the incident this message
	// belongs to; a recovery carries the flip it closes.
	IncidentFlipID int64
	Event          string
	// Reminder numbers a reminder of the incident (0: the flip itself).
	Reminder int
	// Flapping marks the one message that says the beet is flapping.
	Flapping  bool
	Status    DeliveryStatus
	Attempts  int
	NextAt    time.Time
	CreatedAt time.Time
	// LastAt, Latency and Error describe the last attempt.
	LastAt  *time.Time
	Latency time.Duration
	Error   string
}

// IdempotencyKey is stable for the life of a delivery: every retry of one
// message carries the same key, so receivers can drop duplicates.
func (d *Delivery) IdempotencyKey() string {
	return "beet-delivery-" + itoa(d.ID)
}

// IncidentKey names the incident a message belongs to, such as a
// PagerDuty dedup_key: the alert and its recovery share it.
func (d *Delivery) IncidentKey() string {
	if d.IncidentFlipID == 0 {
		return "beet-test-" + itoa(d.ID)
	}
	return "beet-" + itoa(d.BeetID) + "-incident-" + itoa(d.IncidentFlipID)
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// NotifyEvent says which message a flip sends, or "" for none. Only flips
// that matter to people are sent: into down or anomalous, and recovery from
// them back to up. First events, learning done and a person's pause or
// resume are not sent.
func NotifyEvent(f *Flip) string {
	if f.Kind == FlipManual || f.Kind == FlipFirst || f.Kind == FlipLearned {
		return ""
	}
	bad := func(s Status) bool { return s == StatusDown || s == StatusAnomalous }
	switch {
	case f.To == StatusDown && f.From != StatusDown:
		return EventDown
	case f.To == StatusAnomalous && f.From != StatusAnomalous:
		return EventAnomalous
	case f.To == StatusUp && bad(f.From):
		return EventUp
	}
	return ""
}

// DeliveryResult is the outcome of one attempt, as a worker records it.
type DeliveryResult struct {
	ID       int64
	Attempts int // the attempt this result is for (a fencing token)
	At       time.Time
	Latency  time.Duration
	Status   DeliveryStatus
	Error    string
	// NextAt is when to try again, for a pending status.
	NextAt time.Time
	// ChannelFailing marks the channel as failing (a permanent refusal);
	// a delivered status clears the mark.
	ChannelFailing bool
}

// ChannelStore keeps channels and which beets they serve.
type ChannelStore interface {
	// CreateChannel inserts c, sets its ID and attaches it to every beet of
	// its account.
	CreateChannel(ctx context.Context, c *Channel) error
	FindChannelByID(ctx context.Context, id int64) (*Channel, error)
	// FindChannels returns the account's channels, oldest first.
	FindChannels(ctx context.Context, accountID int64) ([]*Channel, error)
	UpdateChannel(ctx context.Context, id int64, upd ChannelUpdate, at time.Time) (*Channel, error)
	DeleteChannel(ctx context.Context, id int64) error
	// BeetChannels returns the IDs of the channels the beet notifies.
	BeetChannels(ctx context.Context, beetID int64) ([]int64, error)
	// SetBeetChannels replaces them; every ID must be a channel of the
	// beet's account (ENOTFOUND otherwise).
	SetBeetChannels(ctx context.Context, beetID int64, channelIDs []int64) error
	// ChannelsOfBeets returns the channel IDs of each of the beets, in one
	// read; beets without channels are absent from the map.
	ChannelsOfBeets(ctx context.Context, beetIDs []int64) (map[int64][]int64, error)
}

// DeliveryStore is the outbox.
type DeliveryStore interface {
	// CreateDelivery inserts a delivery that no flip made (a test message).
	CreateDelivery(ctx context.Context, d *Delivery) error
	// ClaimDeliveries takes up to limit pending deliveries due at now: it
	// counts an attempt on each and moves its NextAt to now+lease, in one
	// compare and set, so no other worker takes them meanwhile. A worker
	// that dies leaves them to be claimed again when the lease ends.
	ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*Delivery, error)
	// ClaimDelivery claims one pending delivery by ID (test messages are
	// sent at once); ECONFLICT if it is not pending.
	ClaimDelivery(ctx context.Context, id int64, now time.Time, lease time.Duration) (*Delivery, error)
	// RecordDelivery stores the outcome of an attempt, only if the delivery
	// is still on that attempt; it reports whether it did.
	RecordDelivery(ctx context.Context, r DeliveryResult) (bool, error)
	FindDeliveryByID(ctx context.Context, id int64) (*Delivery, error)
	// FindDeliveries returns the channel's deliveries, newest first.
	FindDeliveries(ctx context.Context, channelID int64, limit int) ([]*Delivery, error)
	FindFlipByID(ctx context.Context, id int64) (*Flip, error)
	// CountNotifiedFlips counts the beet's flips that send messages in
	// [since, until].
	CountNotifiedFlips(ctx context.Context, beetID int64, since, until time.Time) (int, error)
	// MarkFlapping makes delivery id the flapping notice of its beet on its
	// channel, unless another delivery created at or after since already
	// is; it reports whether it did.
	MarkFlapping(ctx context.Context, id int64, since time.Time) (bool, error)
	// CreateReminders adds a reminder delivery for every channel with
	// reminders whose beet is still down or anomalous and whose last
	// message about the incident is at least its reminder period old. It
	// is idempotent per (incident, channel, reminder number) across
	// instances, and returns how many it added.
	CreateReminders(ctx context.Context, now time.Time) (int, error)
	// DeleteDeliveriesBefore removes up to limit finished deliveries
	// created before t and returns how many it removed.
	DeleteDeliveriesBefore(ctx context.Context, t time.Time, limit int) (int, error)
}

// MaintenanceWindow silences a beet, or every beet of an account (BeetID
// 0): flips inside it are recorded but not sent. It is one-off (Start,
// End) or repeating (Cron in Timezone, for Duration from each slot).
type MaintenanceWindow struct {
	ID        int64
	AccountID int64
	BeetID    int64
	Start     *time.Time
	End       *time.Time
	Cron      string
	Timezone  string
	Duration  time.Duration
	Note      string
	CreatedAt time.Time
}

// MaxMaintenanceDuration bounds a repeating window's length.
const MaxMaintenanceDuration = 7 * 24 * time.Hour

// Validate checks a window's shape; the caller parses Cron.
func (w *MaintenanceWindow) Validate() error {
	if utf8.RuneCountInString(w.Note) > MaxDescriptionLen {
		return FieldError("note", "is longer than %d characters", MaxDescriptionLen)
	}
	if w.Cron == "" {
		if w.Start == nil || w.End == nil {
			return FieldError("starts_at", "a window needs starts_at and ends_at, or cron with timezone and duration_seconds")
		}
		if !w.End.After(*w.Start) {
			return FieldError("ends_at", "must be after starts_at")
		}
		if w.Duration != 0 || w.Timezone != "" {
			return FieldError("cron", "duration_seconds and timezone go with cron")
		}
		return nil
	}
	if w.Start != nil || w.End != nil {
		return FieldError("cron", "a repeating window takes no starts_at or ends_at")
	}
	if err := ValidateTimezone("timezone", w.Timezone); err != nil {
		return err
	}
	if w.Duration < time.Minute || w.Duration > MaxMaintenanceDuration {
		return FieldError("duration_seconds", "must be from 60 to %d", int(MaxMaintenanceDuration.Seconds()))
	}
	return nil
}

// MaintenanceStore keeps maintenance windows.
type MaintenanceStore interface {
	CreateMaintenance(ctx context.Context, w *MaintenanceWindow) error
	// FindMaintenance returns the account's windows, or with beetID > 0
	// those that apply to the beet (its own and the account's).
	FindMaintenance(ctx context.Context, accountID, beetID int64) ([]*MaintenanceWindow, error)
	FindMaintenanceByID(ctx context.Context, id int64) (*MaintenanceWindow, error)
	DeleteMaintenance(ctx context.Context, id int64) error
	// FindLiveMaintenance returns, across accounts, up to limit windows
	// that can still cover an instant after since: every repeating window
	// and the one-off windows that end after since.
	FindLiveMaintenance(ctx context.Context, since time.Time, limit int) ([]*MaintenanceWindow, error)
}
