package beet

import (
	"context"
	"net"
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
		if !isHostName(host) && host != "localhost" && host != u.Scheme {
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

// isHostName reports whether host reads as a server's name: dot-separated
// labels of letters, digits and hyphens with at least one dot, or any such
// name with a port. A secret in the host place (Pushover's user key) has
// neither, and neither has a stray ".room".
func isHostName(host string) bool {
	name, port, err := net.SplitHostPort(host)
	if err != nil {
		name, port = host, ""
	}
	if port != "" && strings.Trim(port, "0123456789") != "" {
		return false
	}
	labels := strings.Split(name, ".")
	if len(labels) < 2 && port == "" {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || strings.Trim(strings.ToLower(l), "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return false
		}
	}
	return true
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
