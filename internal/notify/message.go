// Package notify delivers flips to people: it renders one message per
// channel kind, sends it (webhook, email, Slack, Discord, Teams, PagerDuty,
// ntfy, and through the shoutrrr library Telegram, Pushover, Gotify, Matrix,
// Mattermost, Google Chat, Zulip, Opsgenie and Rocket.Chat) and runs the worker that drains the delivery outbox with retries,
// backoff and jitter. Every HTTP target is dialled through a guard that
// refuses private addresses unless the operator allows them.
package notify

import (
	"html"
	"strconv"
	"strings"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
)

// Message is what one delivery says, in every form the kinds need.
type Message struct {
	Event          string // beet.down, beet.anomalous, beet.up, beet.paused or test
	Beet           *beet.Beet
	Flip           *beet.Flip
	Reminder       int
	Flapping       bool
	Settled        bool // a beet reported flapping has settled; Event is its state
	IdempotencyKey string
	IncidentKey    string
	// ResolvesIncidentKey is an earlier incident this message also closes:
	// the one a flapping notice opened, when the flips after it (and so
	// its recovery) were suppressed.
	ResolvesIncidentKey string
	Link                string // the beet's page
	Title               string // "Checkout is down"
	Summary             string // the flip's reason, with its numbers
	When                string // "since 2026-06-01 15:02 EEST (Europe/Riga), 12 min ago"
	At                  time.Time
}

// Text is the message as plain text.
func (m *Message) Text() string {
	var b strings.Builder
	b.WriteString(m.Title + "\n\n" + m.Summary + "\n" + m.When + "\n")
	if m.Link != "" {
		b.WriteString("\n" + m.Link + "\n")
	}
	return b.String()
}

// HTML is the message as a small HTML document, for email.
func (m *Message) HTML() string {
	e := html.EscapeString
	var b strings.Builder
	b.WriteString(`<!doctype html><html><body style="font-family:sans-serif">`)
	b.WriteString(`<h2 style="color:` + m.color() + `">` + e(m.Title) + `</h2>`)
	b.WriteString(`<p>` + e(m.Summary) + `</p><p>` + e(m.When) + `</p>`)
	if m.Link != "" {
		b.WriteString(`<p><a href="` + e(m.Link) + `">Open ` + e(m.Beet.Name) + ` in Beet</a></p>`)
	}
	b.WriteString(`</body></html>`)
	return b.String()
}

// good reports whether the message is good news (recovery, pause or a
// test).
func (m *Message) good() bool {
	return m.Event == beet.EventUp || m.Event == beet.EventTest || m.Event == beet.EventPaused
}

// resolves reports whether the message ends its incident.
func (m *Message) resolves() bool { return m.Event == beet.EventUp || m.Event == beet.EventPaused }

// resolveAfter is the incident key that incident services (PagerDuty,
// Opsgenie) resolve after sending m, or "": an earlier incident m's
// opened in its place, or a test's own, so no one on call is left with a
// test incident to close.
func (m *Message) resolveAfter() string {
	switch k := m.ResolvesIncidentKey; {
	case m.Event == beet.EventTest:
		return m.IncidentKey
	case k != m.IncidentKey:
		return k
	}
	return ""
}

// stateEvent is the event that names status s.
func stateEvent(s beet.Status) string {
	switch s {
	case beet.StatusDown:
		return beet.EventDown
	case beet.StatusAnomalous:
		return beet.EventAnomalous
	case beet.StatusPaused:
		return beet.EventPaused
	}
	return beet.EventUp
}

func (m *Message) color() string {
	switch {
	case m.good():
		return "#2e7d32"
	case m.Event == beet.EventAnomalous:
		return "#ef6c00"
	}
	return "#c62828"
}

// inZone writes t in loc with the zone named once: "03:14 EET
// (Europe/Riga)", but "03:14 UTC", not "03:14 UTC (UTC)".
func inZone(t time.Time, loc *time.Location) string {
	s := t.In(loc).Format("2006-01-02 15:04 MST")
	if abbr, _ := t.In(loc).Zone(); abbr == loc.String() {
		return s
	}
	return s + " (" + loc.String() + ")"
}

// render builds the message of delivery d about flip f of beet b. incident
// is the flip that opened the incident (nil if unknown); now is when it
// is sent, for "how long".
func render(d *beet.Delivery, b *beet.Beet, f, incident *beet.Flip, baseURL string, now time.Time) *Message {
	m := &Message{Event: d.Event, Beet: b, Flip: f, Reminder: d.Reminder, Flapping: d.Flapping,
		IdempotencyKey: d.IdempotencyKey(), IncidentKey: d.IncidentKey(), At: now}
	if d.Event == beet.EventTest {
		m.Title = "Test message from Beet"
		m.Summary = "This channel works: Beet will send alerts here when a beet goes down, becomes anomalous or recovers."
		m.When = "Sent " + now.UTC().Format("2006-01-02 15:04:05 MST") + "."
		m.Beet = &beet.Beet{Name: "Test", Status: beet.StatusUp, Timezone: "UTC"}
		m.Flip = &beet.Flip{At: now, From: beet.StatusUp, To: beet.StatusUp, Kind: "test", Reason: m.Summary}
		return m
	}
	loc, err := time.LoadLocation(b.Timezone)
	if err != nil {
		loc = time.UTC
	}
	local := func(t time.Time) string { return inZone(t, loc) }
	if baseURL != "" {
		m.Link = strings.TrimRight(baseURL, "/") + "/beets/" + strconv.FormatInt(b.ID, 10)
	}
	start := f.At
	if incident != nil {
		start = incident.At
	}
	switch d.Event {
	case beet.EventSettled:
		m.Event, m.Settled = stateEvent(f.To), true
		renderSettled(m, b, f, incident, start, local, now)
		return m
	case beet.EventPaused:
		was := string(f.From)
		m.Title = b.Name + " is paused"
		m.Summary = "Paused by a user while it was " + was + "; alerts are off until it is resumed."
		m.When = "Paused " + local(f.At) + " after " + detect.Duration(f.At.Sub(start)) + " " + was + " (since " + local(start) + ")."
		return m
	}
	state := map[string]string{beet.EventDown: "down", beet.EventAnomalous: "anomalous"}[d.Event]
	switch {
	case d.Flapping:
		m.Title = b.Name + " is flapping"
	case d.Event == beet.EventUp && f.To == beet.StatusLearning:
		// The learning guard's alarm ended: events came, and the beet is
		// learning, not up.
		m.Title = b.Name + ": events are back (still learning)"
	case d.Event == beet.EventUp:
		m.Title = b.Name + " is back up"
	case d.Reminder > 0:
		m.Title = b.Name + " is still " + state
	default:
		m.Title = b.Name + " is " + state
	}
	// The reason gives the numbers in words and units; the flip's bare
	// observed and expected stay in the webhook's flip, for machines.
	m.Summary = sentence(f.Reason)
	if d.Flapping {
		m.Summary = "It changed state many times in the last hour; Beet stays quiet about it until it settles. Latest: " + m.Summary
	}
	switch {
	case d.Event == beet.EventUp:
		m.When = "Recovered " + local(f.At) + " after " + detect.Duration(f.At.Sub(start)) + " (" + stateOf(incident) + " since " + local(start) + ")."
	default:
		m.When = since(state, f, incident, start, local, now)
	}
	return m
}

// since words how long the beet has been in state (down or anomalous):
// "Down since 23:16 UTC, 55 min ago". When the incident opened in another
// state (anomalous, then down), it names both, so "down since" is not
// dated to when the beet was still only anomalous.
func since(state string, f, incident *beet.Flip, start time.Time, local func(time.Time) string, now time.Time) string {
	title := strings.ToUpper(state[:1]) + state[1:]
	if incident == nil || incident.To == f.To || string(f.To) != state || !f.At.After(start) {
		return title + " since " + local(start) + ", " + ago(now.Sub(start)) + "."
	}
	return title + " since " + local(f.At) + ", " + ago(now.Sub(f.At)) +
		" (" + string(incident.To) + " since " + local(start) + ", " + ago(now.Sub(start)) + ")."
}

// renderSettled words the message that a beet reported flapping has
// settled: its state now, and since when. f is its latest flip; start is
// when its open incident began (down or anomalous).
func renderSettled(m *Message, b *beet.Beet, f, incident *beet.Flip, start time.Time, local func(time.Time) string, now time.Time) {
	state := string(f.To)
	m.Title = b.Name + " has settled: it is " + state
	switch f.To {
	case beet.StatusDown, beet.StatusAnomalous:
		m.Summary = "It stopped flapping and is still " + state + ": " + sentence(f.Reason) +
			" Alerts are sent as usual again."
		m.When = since(state, f, incident, start, local, now)
	case beet.StatusPaused:
		m.Summary = "It stopped flapping and was paused by a user; alerts are off until it is resumed."
		m.When = "Paused since " + local(f.At) + ", " + ago(now.Sub(f.At)) + "."
	default:
		m.Summary = "It stopped flapping: no change of state since it came back up. Alerts are sent as usual again."
		m.When = "Up since " + local(f.At) + ", " + ago(now.Sub(f.At)) + "."
	}
}

// ago words how long ago something began, in whole minutes: a message
// is read minutes later, so "850 ms ago" would be false precision.
func ago(d time.Duration) string {
	if d < time.Minute {
		return "under a minute ago"
	}
	return detect.Duration(d.Truncate(time.Minute)) + " ago"
}

func stateOf(f *beet.Flip) string {
	if f == nil {
		return "in trouble"
	}
	return string(f.To)
}

func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "!") && !strings.HasSuffix(s, "?") {
		s += "."
	}
	return s
}
