package ingest

// previewBot is a link-preview bot or crawler, known by the product token
// its User-Agent carries.
type previewBot struct {
	name  string // as the beet's owner reads it in the problem noted
	token string // lower case, matched with ASCII case folding
	// lead: the token must open the User-Agent and be followed by '/' or
	// its end. An app's own fetcher sends its bare name ("WhatsApp/2.23.20.0
	// A", "Viber/20.9.0.8 CFNetwork/…"); its in-app browser, a person,
	// carries the same name after a browser's ("Mozilla/5.0 … Viber/20.7.0.3").
	lead bool
}

// previewBots are the link-preview bots and crawlers whose GETs are
// ignored unless the beet allows bots: a chat app unfurling a pasted beacon
// URL must not fake an event (CONTRACT §1). Each token is one the bot
// sends, as its owner documents it or as it shows in logs, and one no
// person's browser carries: in-app browsers (Snapchat's, Viber's,
// Telegram's, Slack's, LinkedIn's) are people and are recorded. Left out
// for want of such a token: Signal's previews, which send "WhatsApp/2" (and
// are caught as WhatsApp's), Rocket.Chat's server, which sends a Chrome
// User-Agent, and Rocket.Chat's and Mattermost's desktop apps, which are
// people. bots_test.go holds the real User-Agents, bots and browsers.
var previewBots = []previewBot{
	{"Slackbot", "slackbot", false}, // Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots), Slackbot 1.0 (…)
	{"Slack-ImgProxy", "slack-imgproxy", false},
	{"Twitterbot", "twitterbot", false},
	{"facebookexternalhit", "facebookexternalhit", false}, // also Apple's iMessage preview, and LINE's
	{"Facebot", "facebot", false},
	{"Discordbot", "discordbot", false},
	{"TelegramBot", "telegrambot", false},    // TelegramBot (like TwitterBot)
	{"WhatsApp or Signal", "whatsapp", true}, // WhatsApp/2.23.20.0 A; Signal sends WhatsApp/2
	{"LinkedInBot", "linkedinbot", false},
	{"Googlebot", "googlebot", false},
	{"bingbot", "bingbot", false},
	{"Applebot", "applebot", false},
	{"redditbot", "redditbot", false},
	{"SkypeUriPreview", "skypeuripreview", false},
	{"Embedly", "embedly", false},
	{"Iframely", "iframely", false},
	{"Pinterestbot", "pinterestbot", false},
	{"vkShare", "vkshare", false},
	{"Mattermost", "mattermost-bot", false}, // the server's fetcher: Mattermost-Bot/1.1
	{"YandexBot", "yandexbot", false},
	{"DuckDuckBot", "duckduckbot", false},
	{"Baiduspider", "baiduspider", false},
	{"Yahoo! Slurp", "yahoo! slurp", false},
	{"Google-InspectionTool", "google-inspectiontool", false},
	{"PetalBot", "petalbot", false},
	{"Bytespider", "bytespider", false},
	{"Mastodon", "(mastodon/", false}, // http.rb/5.1.1 (Mastodon/4.1.2; +https://mastodon.social/)
	{"Snap URL Preview Service", "snap url preview service", false},
	{"ZoominfoBot", "zoominfobot", false},
	{"MicrosoftPreview", "microsoftpreview", false}, // Teams and Outlook
	{"Viber", "viber", true},
	{"LINE (line-poker)", "line-poker", false},
	{"KakaoTalk (kakaotalk-scrap)", "kakaotalk-scrap", false},
}

// botsByFirst lists the tokens found anywhere by their first byte, and
// botPairs has bit c2 of botPairs[c1] set when one starts with c1 c2: one
// pass over the User-Agent looks only where a token could start. Lowering
// the whole User-Agent and searching it once per token took 1-4 µs a
// request (and an allocation when it had capitals), every recorded GET.
// leadBots are the tokens that must open the User-Agent.
var (
	botsByFirst [256][]*previewBot
	botPairs    [256][4]uint64
	leadBots    []*previewBot
)

func init() {
	for i := range previewBots {
		b := &previewBots[i]
		if b.lead {
			leadBots = append(leadBots, b)
			continue
		}
		botsByFirst[b.token[0]] = append(botsByFirst[b.token[0]], b)
		botPairs[b.token[0]][b.token[1]>>6] |= 1 << (b.token[1] & 63)
	}
}

// previewBotOf returns the name of the link-preview bot ua belongs to, or
// "" for none. The tokens are ASCII and matched with ASCII case folding
// (strings.ToLower would also fold a Kelvin sign into a k; no bot sends one).
func previewBotOf(ua string) string {
	if len(ua) < 2 {
		return ""
	}
	for _, b := range leadBots {
		if hasPrefixFold(ua, b.token) && (len(ua) == len(b.token) || ua[len(b.token)] == '/') {
			return b.name
		}
	}
	c1 := lowerASCII(ua[0])
	for i := 1; i < len(ua); i++ {
		c2 := lowerASCII(ua[i])
		if botPairs[c1][c2>>6]&(1<<(c2&63)) != 0 {
			for _, b := range botsByFirst[c1] {
				if hasPrefixFold(ua[i-1:], b.token) {
					return b.name
				}
			}
		}
		c1 = c2
	}
	return ""
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasPrefixFold reports whether s starts with lower, ASCII case folded.
func hasPrefixFold(s, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for i := 0; i < len(lower); i++ {
		if lowerASCII(s[i]) != lower[i] {
			return false
		}
	}
	return true
}
