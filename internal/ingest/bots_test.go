package ingest

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/beethq/beet"
)

// TestPreviewBots holds real User-Agents: link-preview bots and crawlers
// are ignored and named; in-app browsers (people reading a shared link or
// shopping from an ad) and jobs whose User-Agent merely holds a bot's
// word are recorded.
func TestPreviewBots(t *testing.T) {
	for _, c := range []struct{ ua, bot string }{
		{"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", "Slackbot"},
		{"Slackbot 1.0 (+https://api.slack.com/robots)", "Slackbot"},
		{"Slack-ImgProxy (+https://api.slack.com/robots)", "Slack-ImgProxy"}, // shows a pasted GIF URL in the channel
		{"Twitterbot/1.0", "Twitterbot"},
		{"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", "facebookexternalhit"},
		// iMessage's preview.
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_11_1) AppleWebKit/601.2.4 (KHTML, like Gecko) Version/9.0.1 Safari/601.2.4 facebookexternalhit/1.1 Facebot Twitterbot/1.0", "facebookexternalhit"},
		{"Facebot", "Facebot"},
		{"Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)", "Discordbot"},
		{"TelegramBot (like TwitterBot)", "TelegramBot"},
		{"WhatsApp/2.23.20.0 A", "WhatsApp or Signal"},
		{"WhatsApp/2.21.4.22 i", "WhatsApp or Signal"},
		{"WhatsApp/2", "WhatsApp or Signal"}, // Signal Desktop's and Signal Android's previews
		{"LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)", "LinkedInBot"},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "Googlebot"},
		{"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "bingbot"},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)", "Applebot"},
		{"Mozilla/5.0 (compatible; redditbot/1.0; +http://www.reddit.com/feedback)", "redditbot"},
		{"Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5", "SkypeUriPreview"},
		{"Mozilla/5.0 (compatible; Embedly/0.2; +http://support.embed.ly/)", "Embedly"},
		{"Iframely/1.3.1 (+https://iframely.com/docs/about)", "Iframely"},
		{"Mozilla/5.0 (compatible; Pinterestbot/1.0; +http://www.pinterest.com/bot.html)", "Pinterestbot"},
		{"Mozilla/5.0 (compatible; vkShare; +http://vk.com/dev/Share)", "vkShare"},
		{"Mattermost-Bot/1.1", "Mattermost"},
		{"Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", "YandexBot"},
		{"DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)", "DuckDuckBot"},
		{"Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)", "Baiduspider"},
		{"Mozilla/5.0 (compatible; Yahoo! Slurp; http://help.yahoo.com/help/us/ysearch/slurp)", "Yahoo! Slurp"},
		{"Mozilla/5.0 (compatible; Google-InspectionTool/1.0)", "Google-InspectionTool"},
		{"Mozilla/5.0 (Linux; Android 7.0;) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; PetalBot;+https://webmaster.petalsearch.com/site/petalbot)", "PetalBot"},
		{"Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)", "Bytespider"},
		{"http.rb/5.1.1 (Mastodon/4.1.2; +https://mastodon.social/)", "Mastodon"},
		{"Snap URL Preview Service; bot; snapchat; https://developers.snap.com/robots", "Snap URL Preview Service"},
		{"ZoominfoBot (zoominfobot at zoominfo dot com)", "ZoominfoBot"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/107.0.0.0 Safari/537.36 Edg/107.0.1418.62 (compatible; MicrosoftPreview/2.0; +https://aka.ms/MicrosoftPreview)", "MicrosoftPreview"},
		{"Viber/20.9.0.8 CFNetwork/1410.0.3 Darwin/22.6.0", "Viber"}, // the app's own fetch
		{"Viber", "Viber"},
		{"line-poker/1.0", "LINE (line-poker)"},
		{"kakaotalk-scrap/1.0; +https://devtalk.kakao.com/t/scrap/33984", "KakaoTalk (kakaotalk-scrap)"},

		// People in in-app browsers.
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Snapchat/12.60.0.44 (like Safari/8617.1.17.10.6, panda)", ""},
		{"Mozilla/5.0 (Linux; Android 13; SM-A536B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Mobile Safari/537.36 Viber/20.7.0.3", ""},
		{"Mozilla/5.0 (Linux; Android 13; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.144 Mobile Safari/537.36 Telegram-Android/10.5.0 (Google Pixel 7; Android 13; SDK 33; AVERAGE)", ""},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_1_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/444.0.0.41.110;FBBV/544875455;FBDV/iPhone14,5;FBMD/iPhone;FBSN/iOS;FBSV/17.1.2;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5]", ""},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_1_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 312.0.0.32.112 (iPhone14,5; iOS 17_1_2; en_US; en; scale=3.00; 1170x2532; 548339486)", ""},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_1_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [LinkedInApp]/9.29.8291", ""},
		{"Mozilla/5.0 (Linux; Android 12; SM-G991B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.6045.193 Mobile Safari/537.36 TwitterAndroid", ""},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Safari Line/13.20.0", ""},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 KAKAOTALK 10.4.5", ""},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [Pinterest/iOS]", ""},
		// Desktop chat apps: a person who opened a link.
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) AtomShell/4.35.131 Chrome/118.0.5993.159 Electron/27.1.3 Safari/537.36 Slack_SSB/4.35.131", ""},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Rocket.Chat/3.9.9 Chrome/114.0.5735.289 Electron/25.8.4 Safari/537.36", ""},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Mattermost/5.6.0 Chrome/120.0.6099.56 Electron/28.0.0 Safari/537.36", ""},
		// Browsers, jobs and clients.
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36", ""},
		// Jobs whose User-Agent merely holds a bot's word.
		{"MySignalProcessor/1.0 curl/8.0", ""},
		{"signal-exporter/2.1", ""},
		{"snapchat-ads-sync/1.0", ""},
		{"slurp-logs/0.3", ""},
		{"curl/8.5.0", ""}, {"Go-http-client/1.1", ""}, {"runitor/1.3.0 (+https://bdd.fi/x/runitor)", ""}, {"", ""}, {"V", ""},
	} {
		if got := previewBotOf(c.ua); got != c.bot {
			t.Errorf("previewBotOf(%q) = %q, want %q", c.ua, got, c.bot)
		}
	}
}

// TestBotDetail: the problem noted names the bot that matched, even when
// its token comes after a long browser-like User-Agent, and fits.
func TestBotDetail(t *testing.T) {
	ua := "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/107.0.0.0 Safari/537.36 Edg/107.0.1418.62 (compatible; MicrosoftPreview/2.0; +https://aka.ms/MicrosoftPreview)"
	d := botDetail(previewBotOf(ua), ua)
	if !strings.HasPrefix(d, "ignored a link-preview request from MicrosoftPreview (User-Agent \"Mozilla/5.0") || !strings.HasSuffix(d, "; allow bots on the beet to record them") {
		t.Errorf("detail %q", d)
	}
	long := "facebookexternalhit/1.1 " + strings.Repeat("é", 400)
	if d := botDetail("facebookexternalhit", long); len(d) > beet.MaxProblemDetailLen || !utf8.ValidString(d) || !strings.Contains(d, "…\")") {
		t.Errorf("detail of a long User-Agent: %d bytes, %q", len(d), d)
	}
}

// matchBot is the plain definition previewBotOf must agree with.
func matchBot(ua string) bool {
	lower := strings.ToLower(ua)
	for _, b := range previewBots {
		if b.lead && strings.HasPrefix(lower, b.token) && (len(lower) == len(b.token) || lower[len(b.token)] == '/') ||
			!b.lead && strings.Contains(lower, b.token) {
			return true
		}
	}
	return false
}

// TestPreviewBotAgrees checks the one-pass search against the plain
// definition: every token in any case, where it may stand, and random
// strings made of the tokens' own letters, which come close to them often.
func TestPreviewBotAgrees(t *testing.T) {
	browser := "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"
	for _, b := range previewBots {
		uas := []string{b.token, strings.ToUpper(b.token), b.token + "/1.0 " + browser}
		if !b.lead {
			uas = append(uas, browser+" "+strings.ToUpper(b.token[:1])+b.token[1:], browser[:40]+strings.ToUpper(b.token)+browser[40:])
		} else if previewBotOf(browser+" "+b.token+"/1.0") != "" || previewBotOf(b.token+"x/1.0") != "" {
			t.Errorf("%s matched away from the start of the User-Agent, or not followed by /", b.token)
		}
		for _, ua := range uas {
			if previewBotOf(ua) != b.name {
				t.Errorf("previewBotOf(%q) = %q, want %q", ua, previewBotOf(ua), b.name)
			}
		}
		if short := b.token[:len(b.token)-1]; (previewBotOf(short) != "") != matchBot(short) {
			t.Errorf("previewBotOf(%q) disagrees", short)
		}
	}
	letters := "abcdefghiklmnoprstuvwxyzABGDFKLMNOPRSTW-. /!("
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			b[i] = letters[rng.IntN(len(letters))]
		}
		if ua := string(b); (previewBotOf(ua) != "") != matchBot(ua) {
			t.Fatalf("previewBotOf(%q) = %q, the plain search says %v", ua, previewBotOf(ua), matchBot(ua))
		}
	}
}

// BenchmarkIsPreviewBot is the check every recorded GET makes, beside the
// plain search it replaced (lower the whole User-Agent, one search a name).
func BenchmarkIsPreviewBot(b *testing.B) {
	for _, ua := range []struct{ name, ua string }{
		{"browser", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"},
		{"curl", "curl/8.5.0"},
	} {
		for _, f := range []struct {
			name string
			fn   func(string) bool
		}{{"onepass", func(ua string) bool { return previewBotOf(ua) != "" }}, {"plain", matchBot}} {
			b.Run(ua.name+"/"+f.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					f.fn(ua.ua)
				}
			})
		}
	}
}
