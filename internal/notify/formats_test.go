package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/notify"
)

// Each receiver below checks what it gets against the format the real
// service documents, decoding strictly (an unknown field fails).

type slackMessage struct {
	Text   string `json:"text"`
	Blocks []struct {
		Type string `json:"type"`
		Text struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"text"`
	} `json:"blocks"`
}

func checkSlack(t *testing.T, body []byte) slackMessage {
	t.Helper()
	var m slackMessage
	decodeStrict(t, body, &m)
	if m.Text == "" || len(m.Blocks) == 0 || len(m.Blocks) > 50 {
		t.Fatalf("slack: text is required as the notification fallback, and 1 to 50 blocks: %s", body)
	}
	for _, b := range m.Blocks {
		if b.Type != "section" || (b.Text.Type != "mrkdwn" && b.Text.Type != "plain_text") || b.Text.Text == "" || len([]rune(b.Text.Text)) > 3000 {
			t.Fatalf("slack: a section block needs a text object of at most 3000 characters: %+v", b)
		}
	}
	return m
}

type discordMessage struct {
	Content         string `json:"content"`
	AllowedMentions *struct {
		Parse []string `json:"parse"`
	} `json:"allowed_mentions"`
	Embeds []struct {
		Title       string `json:"title"`
		Description string `json:"description"`
		URL         string `json:"url"`
		Color       int    `json:"color"`
		Timestamp   string `json:"timestamp"`
	} `json:"embeds"`
}

func checkDiscord(t *testing.T, body []byte) discordMessage {
	t.Helper()
	var m discordMessage
	decodeStrict(t, body, &m)
	if m.Content == "" && len(m.Embeds) == 0 || len([]rune(m.Content)) > 2000 || len(m.Embeds) > 10 {
		t.Fatalf("discord: content (≤ 2000) or embeds (≤ 10) required: %s", body)
	}
	for _, e := range m.Embeds {
		if len([]rune(e.Title)) > 256 || len([]rune(e.Description)) > 4096 || e.Color < 0 || e.Color > 0xFFFFFF {
			t.Fatalf("discord: embed out of limits: %+v", e)
		}
		if _, err := time.Parse(time.RFC3339, e.Timestamp); err != nil {
			t.Fatalf("discord: timestamp %q is not ISO 8601", e.Timestamp)
		}
	}
	return m
}

type teamsMessage struct {
	Type        string `json:"type"`
	Attachments []struct {
		ContentType string  `json:"contentType"`
		ContentURL  *string `json:"contentUrl"`
		Content     struct {
			Schema  string `json:"$schema"`
			Type    string `json:"type"`
			Version string `json:"version"`
			Body    []struct {
				Type     string `json:"type"`
				Text     string `json:"text"`
				Weight   string `json:"weight"`
				Size     string `json:"size"`
				Wrap     bool   `json:"wrap"`
				Color    string `json:"color"`
				IsSubtle bool   `json:"isSubtle"`
			} `json:"body"`
			Actions []struct {
				Type  string `json:"type"`
				Title string `json:"title"`
				URL   string `json:"url"`
			} `json:"actions"`
		} `json:"content"`
	} `json:"attachments"`
}

func checkTeams(t *testing.T, body []byte) teamsMessage {
	t.Helper()
	var m teamsMessage
	decodeStrict(t, body, &m)
	if m.Type != "message" || len(m.Attachments) != 1 {
		t.Fatalf("teams: want a message with one attachment: %s", body)
	}
	a := m.Attachments[0]
	if a.ContentType != "application/vnd.microsoft.card.adaptive" || a.Content.Type != "AdaptiveCard" ||
		!regexp.MustCompile(`^1\.[0-6]$`).MatchString(a.Content.Version) || len(a.Content.Body) == 0 {
		t.Fatalf("teams: not an Adaptive Card (1.0–1.6) with a body: %s", body)
	}
	for _, b := range a.Content.Body {
		if b.Type != "TextBlock" || b.Text == "" {
			t.Fatalf("teams: body element %+v", b)
		}
	}
	for _, act := range a.Content.Actions {
		if act.Type != "Action.OpenUrl" || act.URL == "" {
			t.Fatalf("teams: action %+v", act)
		}
	}
	return m
}

type pagerDutyEvent struct {
	RoutingKey  string `json:"routing_key"`
	EventAction string `json:"event_action"`
	DedupKey    string `json:"dedup_key"`
	Payload     *struct {
		Summary       string         `json:"summary"`
		Source        string         `json:"source"`
		Severity      string         `json:"severity"`
		Timestamp     string         `json:"timestamp"`
		CustomDetails map[string]any `json:"custom_details"`
	} `json:"payload"`
	Links []struct {
		Href string `json:"href"`
		Text string `json:"text"`
	} `json:"links"`
}

func checkPagerDuty(t *testing.T, body []byte) pagerDutyEvent {
	t.Helper()
	var e pagerDutyEvent
	decodeStrict(t, body, &e)
	if len(e.RoutingKey) != 32 || e.DedupKey == "" || len(e.DedupKey) > 255 {
		t.Fatalf("pagerduty: routing_key (32) and dedup_key (≤ 255) required: %s", body)
	}
	switch e.EventAction {
	case "trigger":
		p := e.Payload
		if p == nil || p.Summary == "" || len(p.Summary) > 1024 || p.Source == "" ||
			!strings.Contains(" critical error warning info ", " "+p.Severity+" ") {
			t.Fatalf("pagerduty: a trigger needs payload.summary (≤ 1024), source and severity: %s", body)
		}
		if _, err := time.Parse(time.RFC3339, p.Timestamp); err != nil {
			t.Fatalf("pagerduty: timestamp %q", p.Timestamp)
		}
	case "resolve":
	default:
		t.Fatalf("pagerduty: event_action %q", e.EventAction)
	}
	return e
}

// TestChatAndPagingFormats sends one incident (down, then recovery) to a
// receiver of each kind and checks every payload.
func TestChatAndPagingFormats(t *testing.T) {
	r := newRig(t, "sqlite")
	recv := map[beet.ChannelKind]*receiver{}
	chans := map[beet.ChannelKind]*beet.Channel{}
	for _, k := range []beet.ChannelKind{beet.ChannelSlack, beet.ChannelDiscord, beet.ChannelTeams, beet.ChannelNtfy, beet.ChannelPagerDuty} {
		recv[k] = newReceiver(t)
		cfg := beet.ChannelConfig{URL: recv[k].URL + "/" + string(k) + "/secretpart"}
		if k == beet.ChannelPagerDuty {
			cfg = beet.ChannelConfig{RoutingKey: strings.Repeat("R0", 16)}
		}
		chans[k] = r.channel(k, cfg)
	}
	r.down()
	r.up()
	w := r.worker()
	notify.SetPagerDutyURL(w.Sender, recv[beet.ChannelPagerDuty].URL+"/v2/enqueue")
	for _, c := range chans {
		for _, d := range r.drain(w, c) {
			if d.Status != beet.DeliveryDelivered {
				t.Fatalf("channel %s: %+v", c.Kind, d)
			}
		}
	}
	for k, rc := range recv {
		if n := len(rc.requests()); n != 2 {
			t.Fatalf("%s receiver got %d requests, want 2", k, n)
		}
	}
	name := r.beet.Name
	link := fmt.Sprintf("https://beet.example.com/beets/%d", r.beet.ID)

	s := recv[beet.ChannelSlack].requests()
	if m := checkSlack(t, s[0].Body); !strings.Contains(m.Text, name+" is down") || !strings.Contains(m.Blocks[0].Text.Text, "<"+link+"|") ||
		!strings.Contains(m.Blocks[0].Text.Text, "No event for 2 min; expected one at least every 1 min") || !strings.Contains(m.Blocks[0].Text.Text, "Europe/Riga") {
		t.Errorf("slack alert: %s", s[0].Body)
	}
	if m := checkSlack(t, s[1].Body); !strings.Contains(m.Text, name+" is back up") {
		t.Errorf("slack recovery: %s", s[1].Body)
	}

	d := recv[beet.ChannelDiscord].requests()
	if m := checkDiscord(t, d[0].Body); m.Embeds[0].URL != link || m.Embeds[0].Color != 0xc62828 || !strings.Contains(m.Content, "is down") {
		t.Errorf("discord alert: %s", d[0].Body)
	}
	if m := checkDiscord(t, d[1].Body); m.Embeds[0].Color != 0x2e7d32 {
		t.Errorf("discord recovery: %s", d[1].Body)
	}

	tm := recv[beet.ChannelTeams].requests()
	if m := checkTeams(t, tm[0].Body); m.Attachments[0].Content.Actions[0].URL != link || !strings.Contains(m.Attachments[0].Content.Body[0].Text, "is down") {
		t.Errorf("teams alert: %s", tm[0].Body)
	}
	checkTeams(t, tm[1].Body)

	n := recv[beet.ChannelNtfy].requests()
	for i, want := range []struct{ title, prio, tag string }{{name + " is down", "high", "rotating_light"}, {name + " is back up", "default", "white_check_mark"}} {
		h := n[i].Header
		if h.Get("Title") != want.title || h.Get("Priority") != want.prio || h.Get("Tags") != want.tag || h.Get("Click") != link ||
			!strings.HasPrefix(h.Get("Content-Type"), "text/plain") || len(n[i].Body) == 0 {
			t.Errorf("ntfy message %d: headers %v body %q", i, h, n[i].Body)
		}
	}

	p := recv[beet.ChannelPagerDuty].requests()
	trig, res := checkPagerDuty(t, p[0].Body), checkPagerDuty(t, p[1].Body)
	if trig.EventAction != "trigger" || res.EventAction != "resolve" || trig.DedupKey != res.DedupKey || trig.Payload.Severity != "critical" {
		t.Errorf("pagerduty: %s then %s; want trigger and resolve under one dedup_key", p[0].Body, p[1].Body)
	}
	// A second incident gets a new dedup key.
	r.down()
	r.drain(w, chans[beet.ChannelPagerDuty])
	if again := checkPagerDuty(t, recv[beet.ChannelPagerDuty].requests()[2].Body); again.DedupKey == trig.DedupKey {
		t.Errorf("a new incident reused dedup_key %s", again.DedupKey)
	}
	raw, _ := json.Marshal(p)
	if strings.Contains(string(raw), "secretpart") {
		t.Error("a channel URL's secret part reached a payload")
	}
}

// TestChatNamesAreText: a beet's name is shown as text on Slack and
// Discord: Slack's notification text is escaped like its block (no HTML
// entities broken, no <!channel> mention), and Discord is told to ping
// no one, whatever @everyone or <@&role> the name holds.
func TestChatNamesAreText(t *testing.T) {
	r := newRig(t, "sqlite")
	name := "Nightly <b>backup</b> & co <!channel> @everyone"
	if _, err := r.svc.UpdateBeet(context.Background(), r.acct.ID, r.beet.ID, beet.BeetUpdate{Name: &name}); err != nil {
		t.Fatal(err)
	}
	slack, discord := newReceiver(t), newReceiver(t)
	sch := r.channel(beet.ChannelSlack, beet.ChannelConfig{URL: slack.URL + "/slack"})
	dch := r.channel(beet.ChannelDiscord, beet.ChannelConfig{URL: discord.URL + "/discord"})
	r.down()
	w := r.worker()
	r.drain(w, sch)
	r.drain(w, dch)

	escaped := "Nightly &lt;b&gt;backup&lt;/b&gt; &amp; co &lt;!channel&gt; @everyone"
	m := checkSlack(t, slack.requests()[0].Body)
	for what, text := range map[string]string{"text": m.Text, "block": m.Blocks[0].Text.Text} {
		if !strings.Contains(text, escaped) || strings.Contains(text, "<!channel>") || strings.Contains(text, "<b>") {
			t.Errorf("slack %s = %q; want the name escaped as %q", what, text, escaped)
		}
	}
	d := checkDiscord(t, discord.requests()[0].Body)
	if d.AllowedMentions == nil || d.AllowedMentions.Parse == nil || len(d.AllowedMentions.Parse) != 0 {
		t.Errorf("discord allowed_mentions = %+v; want {\"parse\": []}", d.AllowedMentions)
	}
	if !strings.Contains(d.Content, name) {
		t.Errorf("discord content = %q; want the name as it is", d.Content)
	}
}
