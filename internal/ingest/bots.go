package ingest

// previewBots are User-Agent substrings of link-preview bots and crawlers.
// A chat app unfurling a pasted beacon URL must not fake an event
// (CONTRACT §1), so their GETs are ignored unless the beet allows bots.
// Matched case-insensitively; kept lower case.
var previewBots = []string{
	"slackbot", "slack-imgproxy", "twitterbot", "facebookexternalhit", "facebot", "discordbot",
	"telegrambot", "whatsapp", "linkedinbot", "googlebot", "bingbot",
	"applebot", "redditbot", "skypeuripreview", "embedly", "iframely",
	"pinterestbot", "vkshare", "mattermost", "yandexbot", "duckduckbot",
	"baiduspider", "slurp", "google-inspectiontool", "petalbot", "bytespider",
	"mastodon", "snapchat", "zoominfobot", "microsoftpreview", "viber",
	"line-poker", "kakaotalk-scrap", "signal", "rocket.chat",
}

// botsByFirst lists the names by their first byte, and botPairs has bit c2
// of botPairs[c1] set when a name starts with c1 c2: one pass over the
// User-Agent looks only where a name could start. Lowering the whole
// User-Agent and searching it once per name took 1-4 µs a request (and an
// allocation when it had capitals), every recorded GET.
var (
	botsByFirst [256][]string
	botPairs    [256][4]uint64
)

func init() {
	for _, b := range previewBots {
		botsByFirst[b[0]] = append(botsByFirst[b[0]], b)
		botPairs[b[0]][b[1]>>6] |= 1 << (b[1] & 63)
	}
}

// isPreviewBot reports whether ua belongs to a known link-preview bot. The
// names are ASCII and matched with ASCII case folding (strings.ToLower
// would also fold a Kelvin sign into a k; no bot sends one).
func isPreviewBot(ua string) bool {
	if len(ua) < 2 {
		return false
	}
	c1 := lowerASCII(ua[0])
	for i := 1; i < len(ua); i++ {
		c2 := lowerASCII(ua[i])
		if botPairs[c1][c2>>6]&(1<<(c2&63)) != 0 {
			for _, b := range botsByFirst[c1] {
				if hasPrefixFold(ua[i-1:], b) {
					return true
				}
			}
		}
		c1 = c2
	}
	return false
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
