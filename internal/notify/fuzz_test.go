package notify_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"unicode"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/notify"
)

// FuzzServiceURL checks any service URL of any service kind the way a
// channel's creation does (the library parses it): never a panic, and a
// refusal never repeats a secret-looking part of the URL (its user,
// password, path segments or query values).
func FuzzServiceURL(f *testing.F) {
	for _, s := range []string{
		"telegram://123456789:AAHexampletokenexampletokenexample@telegram?chats=@mychannel,-1001234567890",
		"telegram://123456789:AAH%20bad9token9secret@telegram?chats=@x",
		"telegram://notatoken9secret:x@telegram?chats=@x&preview=maybe9secret",
		"pushover://shoutrrr:azGDORePK8gMaC0QOYAMyEEuzJnyUi@uQiRzpo4DXghDmr9QzzfQu27cmVRsG/?devices=phone&priority=x9secret9",
		"gotify://gotify.example.com/Bbad9token9secret?priority=ten9secret",
		"matrix://:syt_ZXhhbXBsZQ_token@matrix.example.com/?rooms=!room:example.com&disableTLS=maybe9secret",
		"mattermost://mm.example.com:8065/abcdefghijklmnop9secret?disabletls=yes",
		"googlechat://chat.googleapis.com/v1/spaces/AAAA/messages?key=KEY9secret9&token=TOKEN9secret",
		"zulip://bot%40example.com:BOTKEY9secret9@example.zulipchat.com/?stream=alerts&topic=beet",
		"opsgenie://api.eu.opsgenie.com:99999/eb243592-faa2-4ba2-a551q-1afdf565c889",
		"rocketchat://rocket.example.com/TOKENA9secret/TOKENB9secret/@user",
		"gotify://[::1/x", "telegram://%zz@telegram", "zulip://a:b@/?stream=s",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil || !beet.ChannelKind(u.Scheme).ServiceURL() {
			return
		}
		err = notify.CheckTarget(context.Background(), raw, true) // true: no DNS
		if err == nil {
			return
		}
		msg := beet.ErrorMessage(err)
		example := beet.ServiceURLExample(beet.ChannelKind(u.Scheme))
		password, _ := u.User.Password()
		parts := []string{u.User.Username(), password}
		parts = append(parts, strings.Split(u.Path, "/")...)
		for _, vs := range u.Query() {
			parts = append(parts, vs...)
		}
		for _, p := range parts {
			// Long, mixed letters and digits: a token, not a word the
			// library's message or the example could hold.
			if len(p) < 8 || !strings.ContainsFunc(p, unicode.IsDigit) || !strings.ContainsFunc(p, unicode.IsLetter) || strings.Contains(example, p) {
				continue
			}
			if strings.Contains(msg, p) {
				t.Fatalf("the refusal of %q repeats %q: %s", raw, p, msg)
			}
		}
	})
}
