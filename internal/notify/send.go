package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/version"
)

// PagerDutyEventsURL is the Events API v2 endpoint.
const PagerDutyEventsURL = "https://events.pagerduty.com/v2/enqueue"

// SendError is a failed attempt: whether retrying can help, and when the
// receiver asked us to come back (Retry-After). Its text never holds a
// channel's secret.
type SendError struct {
	Msg        string // what the account reads on the delivery
	Detail     string // what the operator's log gets instead, when it needs more
	Permanent  bool
	RetryAfter time.Duration
	Status     int // the receiver's HTTP status; 0 when there was no answer
	// Installation: the fault is this installation's (its mail server
	// refused its login or sender), not the channel's. It is retried
	// like a temporary failure, logged at error level, and never marks
	// the channel failing, even when the delivery is given up on.
	Installation bool
}

func (e *SendError) Error() string { return e.Msg }

// logText is err's text for the operator's log: a SendError's Detail when
// it has one.
func logText(err error) string {
	var se *SendError
	if errors.As(err, &se) && se.Detail != "" {
		return se.Detail
	}
	return err.Error()
}

// Sender sends rendered messages to channels of every kind.
type Sender struct {
	client  *http.Client
	smtp    *SMTPConfig
	baseURL string
	// install tells this installation's email Message-IDs from another's
	// that sends from the same domain (a staging and a production Beet):
	// mail systems drop a message whose Message-ID they already hold.
	install string
	// pagerDutyURL is the Events API endpoint; only tests change it (through
	// export_test.go), so no setting can send routing keys elsewhere.
	pagerDutyURL string
	// matrixTokens holds the access token of each Matrix login (by
	// homeserver, user and password), so a channel logs in once, not per
	// message.
	matrixTokens sync.Map
}

// SenderOptions configures a Sender.
type SenderOptions struct {
	// AllowPrivate lets targets on private addresses through
	// (BEET_ALLOW_PRIVATE_TARGETS).
	AllowPrivate bool
	// BaseURL is the public URL of Beet, for links.
	BaseURL string
	// SMTP is the mail server; nil means email channels cannot send.
	SMTP *SMTPConfig
}

// NewSender returns a Sender.
func NewSender(opts SenderOptions) *Sender {
	sum := sha256.Sum256([]byte(opts.BaseURL))
	return &Sender{client: newHTTPClient(opts.AllowPrivate), smtp: opts.SMTP, baseURL: opts.BaseURL,
		install: hex.EncodeToString(sum[:4]), pagerDutyURL: PagerDutyEventsURL}
}

// Send delivers m to ch once. Its error never holds the channel's
// secrets, even when the receiver's answer repeats them.
func (s *Sender) Send(ctx context.Context, ch *beet.Channel, m *Message) error {
	err := s.send(ctx, ch, m)
	if err == nil || ch.Kind.ServiceURL() { // sendService scrubs its own
		return err
	}
	return scrubChannel(err, ch)
}

// scrubChannel cuts ch's secrets out of err's texts: every part of its URL
// (path segments, query values, user info, in plain and escaped forms),
// its routing key and its signing secret. A receiver's answer may repeat
// them: many frameworks answer "Cannot POST /services/T0/B0/SECRET". The
// masked URL the text starts with shows 7 characters by design and stays.
func scrubChannel(err error, ch *beet.Channel) error {
	var se *SendError
	if !errors.As(err, &se) {
		se = &SendError{Msg: err.Error()}
	}
	masked := beet.MaskURL(ch.Config.URL)
	clean := func(text string) string {
		if text == "" {
			return ""
		}
		if ch.Config.URL != "" {
			text = strings.ReplaceAll(text, masked, "\x00")
			if u, err := url.Parse(ch.Config.URL); err == nil {
				text = scrub(text, u)
			}
		}
		for _, secret := range []string{ch.Config.RoutingKey, ch.Config.Secret} {
			if len(secret) >= 3 {
				text = strings.ReplaceAll(text, secret, "…")
			}
		}
		return strings.ReplaceAll(text, "\x00", masked)
	}
	c := *se
	c.Msg, c.Detail = clean(se.Msg), clean(se.Detail)
	return &c
}

// send is Send before its error is scrubbed.
func (s *Sender) send(ctx context.Context, ch *beet.Channel, m *Message) error {
	switch ch.Kind {
	case beet.ChannelWebhook:
		body, err := json.Marshal(webhookPayload(m))
		if err != nil {
			return err
		}
		h := http.Header{}
		if ch.Config.Secret != "" {
			h.Set("Beet-Signature", Sign(ch.Config.Secret, time.Now(), body))
		}
		return s.post(ctx, ch.Config.URL, "application/json", body, h, m)
	case beet.ChannelSlack:
		return s.postJSON(ctx, ch.Config.URL, slackPayload(m), m)
	case beet.ChannelDiscord:
		return s.postJSON(ctx, ch.Config.URL, discordPayload(m), m)
	case beet.ChannelTeams:
		return s.postJSON(ctx, ch.Config.URL, teamsPayload(m), m)
	case beet.ChannelPagerDuty:
		if err := s.postJSON(ctx, s.pagerDutyURL, pagerDutyPayload(ch.Config.RoutingKey, m), m); err != nil {
			return err
		}
		if k := m.resolveAfter(); k != "" {
			// After the main event, so the beet is never without an open
			// incident while it is in trouble; a retry sends both again,
			// which PagerDuty deduplicates by key.
			return s.postJSON(ctx, s.pagerDutyURL, map[string]any{
				"routing_key": ch.Config.RoutingKey, "event_action": "resolve", "dedup_key": k,
			}, m)
		}
		return nil
	case beet.ChannelNtfy:
		h := http.Header{}
		h.Set("Title", headerText(m.Title))
		h.Set("Priority", map[bool]string{true: "default", false: "high"}[m.good()])
		h.Set("Tags", map[bool]string{true: "white_check_mark", false: "rotating_light"}[m.good()])
		if m.Link != "" {
			h.Set("Click", m.Link)
		}
		return s.post(ctx, ch.Config.URL, "text/plain; charset=utf-8", []byte(m.Summary+"\n"+m.When), h, m)
	case beet.ChannelEmail:
		return s.sendEmail(ctx, ch.Config.To, m)
	}
	if ch.Kind.ServiceURL() {
		return s.sendService(ctx, ch, m)
	}
	return &SendError{Msg: fmt.Sprintf("unknown channel kind %q", ch.Kind), Permanent: true}
}

// Sign returns the Beet-Signature header value for body sent at t:
// t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

func (s *Sender) postJSON(ctx context.Context, target string, v any, m *Message) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.post(ctx, target, "application/json", body, nil, m)
}

// post sends one request and classifies the answer: 2xx delivered; 408,
// 429 and 5xx (and network errors) worth retrying, with the receiver's
// Retry-After; any other status refused for good.
func (s *Sender) post(ctx context.Context, target, contentType string, body []byte, h http.Header, m *Message) error {
	return s.do(ctx, http.MethodPost, target, contentType, body, h, m, nil)
}

// do is post with any method; a 2xx answer's JSON body is decoded into
// out when out is not nil.
func (s *Sender) do(ctx context.Context, method, target, contentType string, body []byte, h http.Header, m *Message, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return &SendError{Msg: "bad target URL " + beet.MaskURL(target), Permanent: true}
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("User-Agent", "Beet/"+version.Version)
	req.Header.Set("Idempotency-Key", m.IdempotencyKey)
	res, err := s.client.Do(req)
	if err != nil {
		// *url.Error prints the whole URL, whose path is often the secret.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return &SendError{Msg: method + " " + beet.MaskURL(target) + ": " + publicNetError(err, false), Permanent: errors.Is(err, errPrivate)}
	}
	defer res.Body.Close()
	if res.StatusCode >= 200 && res.StatusCode < 300 {
		if out != nil {
			if err := json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(out); err != nil {
				return &SendError{Msg: method + " " + beet.MaskURL(target) + ": unreadable answer: " + err.Error()}
			}
		}
		io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10)) // lets the connection be reused
		return nil
	}
	snippet, _ := io.ReadAll(io.LimitReader(res.Body, 300))
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	msg := method + " " + beet.MaskURL(target) + ": HTTP " + strconv.Itoa(res.StatusCode)
	if t := strings.TrimSpace(strings.ToValidUTF8(string(snippet), "")); t != "" {
		msg += ": " + t
	}
	retry := res.StatusCode == 408 || res.StatusCode == 429 || res.StatusCode >= 500
	return &SendError{Msg: msg, Permanent: !retry, RetryAfter: retryAfter(res.Header.Get("Retry-After"), time.Now()), Status: res.StatusCode}
}

// retryAfter reads Retry-After as seconds or an HTTP date; 0 if absent.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// headerText makes s safe for an HTTP header: ntfy reads UTF-8 titles, but
// control characters would break the request.
func headerText(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	return clip(s, 250)
}

// clip cuts s to at most n runes, marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

type webhookBeet struct {
	ID           int64       `json:"id"`
	Name         string      `json:"name"`
	Status       beet.Status `json:"status"`
	StatusReason string      `json:"status_reason"`
	URL          string      `json:"url"`
}

// WebhookPayload is the JSON body of a webhook (CONTRACT §2), with these
// additions: the incident key shared by an alert and its recovery, the
// reminder number, whether this is the flapping notice or the message
// that a flapping beet settled, an earlier incident the message also
// closes, and the event beet.paused.
type WebhookPayload struct {
	Event               string        `json:"event"`
	Beet                webhookBeet   `json:"beet"`
	Flip                beet.FlipJSON `json:"flip"`
	IdempotencyKey      string        `json:"idempotency_key"`
	IncidentKey         string        `json:"incident_key"`
	ResolvesIncidentKey string        `json:"resolves_incident_key,omitempty"`
	Reminder            int           `json:"reminder,omitempty"`
	Flapping            bool          `json:"flapping,omitempty"`
	Settled             bool          `json:"settled,omitempty"`
	Message             string        `json:"message"`
}

func webhookPayload(m *Message) WebhookPayload {
	b, flip := m.Beet, m.Flip.JSON()
	flip.At = flip.At.UTC()
	return WebhookPayload{
		Event:          m.Event,
		Beet:           webhookBeet{ID: b.ID, Name: b.Name, Status: b.Status, StatusReason: b.StatusReason, URL: m.Link},
		Flip:           flip,
		IdempotencyKey: m.IdempotencyKey, IncidentKey: m.IncidentKey, ResolvesIncidentKey: m.ResolvesIncidentKey,
		Reminder: m.Reminder, Flapping: m.Flapping, Settled: m.Settled,
		Message: m.Title + ". " + m.Summary + " " + m.When,
	}
}

// slackPayload follows Slack's incoming webhooks: "text" is the fallback
// shown in notifications, "blocks" the message itself (mrkdwn sections of
// at most 3000 characters).
func slackPayload(m *Message) map[string]any {
	esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace
	text := "*" + esc(m.Title) + "*\n" + esc(m.Summary) + "\n" + esc(m.When)
	if m.Link != "" {
		text += "\n<" + m.Link + "|Open in Beet>"
	}
	return map[string]any{
		// The fallback (notifications, old clients) is parsed like the
		// block: unescaped, a name could break it or mention <!channel>.
		"text": clip(esc(m.Title+": "+m.Summary), 3000),
		"blocks": []any{map[string]any{
			"type": "section",
			"text": map[string]any{"type": "mrkdwn", "text": clip(text, 3000)},
		}},
	}
}

// discordPayload follows Discord's execute-webhook body: "content" (at most
// 2000 characters) and one embed (title 256, description 4096).
func discordPayload(m *Message) map[string]any {
	color, _ := strconv.ParseInt(strings.TrimPrefix(m.color(), "#"), 16, 64)
	embed := map[string]any{
		"title":       clip(m.Title, 256),
		"description": clip(m.Summary+"\n"+m.When, 4096),
		"color":       color,
		"timestamp":   m.Flip.At.UTC().Format(time.RFC3339),
	}
	if m.Link != "" {
		embed["url"] = m.Link
	}
	// No mentions: a name holding @everyone or <@&role> must not ping anyone.
	return map[string]any{"content": clip(m.Title, 2000), "embeds": []any{embed},
		"allowed_mentions": map[string]any{"parse": []string{}}}
}

// teamsPayload is an Adaptive Card in a message, which Teams' Workflows
// ("Post to a channel when a webhook request is received") accept.
func teamsPayload(m *Message) map[string]any {
	body := []any{
		map[string]any{"type": "TextBlock", "text": m.Title, "weight": "Bolder", "size": "Medium", "wrap": true,
			"color": map[bool]string{true: "Good", false: "Attention"}[m.good()]},
		map[string]any{"type": "TextBlock", "text": m.Summary, "wrap": true},
		map[string]any{"type": "TextBlock", "text": m.When, "wrap": true, "isSubtle": true},
	}
	card := map[string]any{
		"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
		"type":    "AdaptiveCard",
		"version": "1.4",
		"body":    body,
	}
	if m.Link != "" {
		card["actions"] = []any{map[string]any{"type": "Action.OpenUrl", "title": "Open in Beet", "url": m.Link}}
	}
	return map[string]any{
		"type": "message",
		"attachments": []any{map[string]any{
			"contentType": "application/vnd.microsoft.card.adaptive",
			"contentUrl":  nil,
			"content":     card,
		}},
	}
}

// pagerDutyPayload is an Events API v2 event: trigger for an alert,
// resolve for a recovery, under one dedup_key per incident.
func pagerDutyPayload(routingKey string, m *Message) map[string]any {
	action := "trigger"
	if m.resolves() {
		action = "resolve"
	}
	ev := map[string]any{
		"routing_key":  routingKey,
		"event_action": action,
		"dedup_key":    m.IncidentKey,
	}
	if action == "trigger" {
		severity := "critical"
		if m.Event == beet.EventAnomalous {
			severity = "warning"
		} else if m.Event == beet.EventTest {
			severity = "info"
		}
		ev["payload"] = map[string]any{
			"summary":   clip(m.Title+": "+m.Summary, 1024),
			"source":    "beet",
			"severity":  severity,
			"timestamp": m.Flip.At.UTC().Format(time.RFC3339),
			"custom_details": map[string]any{
				"beet_id": m.Beet.ID, "reason": m.Flip.Reason, "when": m.When,
			},
		}
		if m.Link != "" {
			ev["links"] = []any{map[string]any{"href": m.Link, "text": "Open in Beet"}}
		}
	}
	return ev
}
