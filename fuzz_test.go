package beet_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/beethq/beet"
)

// FuzzChannelConfig validates any channel kind, name and config. Whatever
// passes, the masked form shown by the API and dashboard keeps the webhook
// secret, the routing key and the secret part of a URL out whole.
func FuzzChannelConfig(f *testing.F) {
	for _, s := range []struct{ kind, name, url, secret, key, to string }{
		{"webhook", "ops", "https://hooks.example.com/services/abcdef0123456789", "whsec_0123456789abcdef", "", ""},
		{"slack", "s", "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX", "", "", ""},
		{"discord", "d", "https://discord.com/api/webhooks/1/abcdefghijklmnopqrstuvwxyz", "", "", ""},
		{"teams", "t", "https://example.webhook.office.com/webhookb2/x?token=0123456789abcdef", "", "", ""},
		{"ntfy", "n", "https://ntfy.sh/beet-alerts-0123456789", "", "", ""},
		{"pagerduty", "p", "", "", "0123456789abcdef0123456789abcdef", ""},
		{"email", "e", "", "", "", "ops@example.com"},
		{"webhook", "w", "https://user:password123@example.com/", "", "", ""},
		{"webhook", "w", "javascript:alert(document.cookie)", "", "", ""},
		{"email", "e", "", "", "", "Ops <ops@example.com>"},
		{"sms", "x", "", "", "", ""},
		{"telegram", "tg", "telegram://123456789:AAHexampletokenexampletokenexample@telegram?chats=@mychannel", "", "", ""},
		{"pushover", "po", "pushover://shoutrrr:azGDORePK8gMaC0QOYAMyEEuzJnyUi@uQiRzpo4DXghDmr9QzzfQu27cmVRsG/?devices=phone", "", "", ""},
		{"gotify", "go", "gotify://gotify.example.com/AexampleToken1x?title=beet", "", "", ""},
		{"matrix", "mx", "matrix://:syt_ZXhhbXBsZQ_token@matrix.example.com/?rooms=!room:example.com", "", "", ""},
		{"matrix", "mx", "matrix://beet:password123@localhost:8008/?disableTLS=yes", "", "", ""},
		{"mattermost", "mm", "mattermost://mm.example.com:8065/abcdefghijklmnopqrstuvwxyz?disabletls=yes", "", "", ""},
		{"googlechat", "gc", "googlechat://chat.googleapis.com/v1/spaces/AAAA/messages?key=KEY123456&token=TOKEN123456", "", "", ""},
		{"zulip", "zu", "zulip://bot@example.zulipchat.com:BOTKEY123456@example.zulipchat.com/?stream=alerts", "", "", ""},
		{"opsgenie", "og", "opsgenie://api.eu.opsgenie.com/eb243592-faa2-4ba2-a551q-1afdf565c889", "", "", ""},
		{"rocketchat", "rc", "rocketchat://rocket.example.com/TOKENAAAAA/TOKENBBBBBBBB", "", "", ""},
		{"gotify", "go", "https://gotify.example.com/AexampleToken1x", "", "", ""},
		{"pushover", "po", "pushover://\x7fsecret@host", "", "", ""},
		{"matrix", "mx", "matrix://room@.room/", "", "", ""},
	} {
		f.Add(s.kind, s.name, s.url, s.secret, s.key, s.to)
	}
	f.Fuzz(func(t *testing.T, kind, name, rawURL, secret, key, to string) {
		c := beet.Channel{Kind: beet.ChannelKind(kind), Name: name,
			Config: beet.ChannelConfig{URL: rawURL, Secret: secret, RoutingKey: key, To: to}}
		if c.Validate() != nil {
			return
		}
		m := c.Config.Masked()
		shown, _ := json.Marshal(m)
		if len(secret) >= 8 && strings.Contains(string(shown), secret) {
			t.Fatalf("masked config %s shows the secret %q", shown, secret)
		}
		if key != "" && strings.Contains(string(shown), key) {
			t.Fatalf("masked config %s shows the routing key", shown)
		}
		if u, err := url.Parse(rawURL); err == nil && u.Host != "" {
			if rest := strings.TrimPrefix(u.RequestURI(), "/"); len(rest) >= 12 && strings.Contains(m.URL, rest) {
				t.Fatalf("masked URL %q shows the path and query %q whole", m.URL, rest)
			}
			if p, ok := u.User.Password(); ok && len(p) >= 4 && strings.Contains(m.URL, p) {
				t.Fatalf("masked URL %q shows the password", m.URL)
			}
		}
		if c.Kind.ServiceURL() {
			// A service URL's secrets sit anywhere but its scheme and a
			// host name: the masked form is scheme://host/… and nothing else.
			u, _ := url.Parse(rawURL)
			host, rest, ok := strings.Cut(strings.TrimPrefix(m.URL, u.Scheme+"://"), "/")
			if !ok || !strings.HasPrefix(m.URL, u.Scheme+"://") || (rest != "" && rest != "…") {
				t.Fatalf("masked service URL %q is not scheme://host/…", m.URL)
			}
			if host != "…" && host != u.Host {
				t.Fatalf("masked service URL %q shows %q, not the host %q", m.URL, host, u.Host)
			}
			if host == u.Host && host != kind && host != "localhost" && (strings.HasPrefix(host, ".") || !strings.ContainsAny(host, ".:")) {
				t.Fatalf("masked service URL %q shows the host %q, which is no host name", m.URL, u.Host)
			}
		}
	})
}

// FuzzDetectionJSON decodes any detection settings as the API does and
// validates them: never a panic, and valid settings survive a round trip
// through their JSON form unchanged and still valid.
func FuzzDetectionJSON(f *testing.F) {
	for _, s := range []string{
		`{"mode": "auto"}`,
		`{"mode": "period", "period_seconds": 3600, "grace_seconds": 300}`,
		`{"mode": "cron", "cron": "0 2 * * *", "timezone": "Europe/Riga", "grace_seconds": 600}`,
		`{"mode": "cron", "cron": "0 2 * * *", "timezone": "../../etc/passwd"}`,
		`{"mode": "period", "period_seconds": 9223372036854775807}`,
		`{"mode": "period", "period_seconds": 60, "grace_seconds": -1}`,
		`{"mode": "auto", "cron": "x"}`, `{"mode": ""}`, `{"mode": "AUTO"}`, `null`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var d beet.Detection
		if json.Unmarshal(body, &d) != nil || d.Validate() != nil {
			return
		}
		again, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var back beet.Detection
		if err := json.Unmarshal(again, &back); err != nil || back != d || back.Validate() != nil {
			t.Fatalf("%+v does not survive its JSON %s: %+v, %v", d, again, back, err)
		}
	})
}
