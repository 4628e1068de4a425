package ingest

import "strings"

// previewBots are User-Agent substrings of link-preview bots and crawlers.
// A chat app unfurling a pasted beacon URL must not fake an event
// (CONTRACT §1), so their GETs are ignored unless the beet allows bots.
// Matched case-insensitively; kept lower case.
var previewBots = []string{
	"slackbot", "twitterbot", "facebookexternalhit", "facebot", "discordbot",
	"telegrambot", "whatsapp", "linkedinbot", "googlebot", "bingbot",
	"applebot", "redditbot", "skypeuripreview", "embedly", "iframely",
	"pinterestbot", "vkshare", "mattermost", "yandexbot", "duckduckbot",
	"baiduspider", "slurp", "google-inspectiontool", "petalbot", "bytespider",
	"mastodon", "snapchat", "zoominfobot", "microsoftpreview", "viber",
	"line-poker", "kakaotalk-scrap", "signal", "rocket.chat",
}

// isPreviewBot reports whether ua belongs to a known link-preview bot.
func isPreviewBot(ua string) bool {
	if ua == "" {
		return false
	}
	lower := strings.ToLower(ua)
	for _, b := range previewBots {
		if strings.Contains(lower, b) {
			return true
		}
	}
	return false
}
