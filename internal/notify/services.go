package notify

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nicholas-fedor/shoutrrr/pkg/services/chat/googlechat"
	"github.com/nicholas-fedor/shoutrrr/pkg/services/chat/matrix"
	"github.com/nicholas-fedor/shoutrrr/pkg/services/chat/mattermost"
	"github.com/nicholas-fedor/shoutrrr/pkg/services/chat/rocketchat"
	"github.com/nicholas-fedor/shoutrrr/pkg/services/chat/telegram"
	"github.com/nicholas-fedor/shoutrrr/pkg/services/chat/zulip"
	"github.com/nicholas-fedor/shoutrrr/pkg/services/incident/opsgenie"
	"github.com/nicholas-fedor/shoutrrr/pkg/services/push/gotify"
	"github.com/nicholas-fedor/shoutrrr/pkg/services/push/pushover"
	"github.com/nicholas-fedor/shoutrrr/pkg/types"
	"github.com/nicholas-fedor/shoutrrr/pkg/util"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/version"
)

// The service-URL kinds (telegram, pushover, gotify, matrix, mattermost,
// googlechat, zulip, opsgenie, rocketchat) are configured by one URL in
// the form of github.com/nicholas-fedor/shoutrrr, which parses and checks
// every one of them. Their messages go through the same outbox, retries
// and private-address guard as the other kinds, because every request
// leaves through the Sender's guarded client:
//
//   - gotify, mattermost, pushover and rocketchat: the library sends, with
//     its HTTP client's transport replaced by the guarded one (these
//     services let a caller set it).
//   - telegram, googlechat, zulip, opsgenie and matrix: the library's send
//     path uses Go's process-wide default client (or one it keeps private),
//     which no caller can give a transport without changing it for the
//     whole process. For these Beet sends the service's documented API
//     request itself, built from the configuration the library parsed.

// targetHosts are the fixed API hosts of the services whose URL names no
// host (the creation-time guard checks the host a send dials).
const (
	telegramAPI = "api.telegram.org"
	pushoverAPI = "api.pushover.net"
)

// serviceURL is a parsed, checked service URL.
type serviceURL struct {
	kind beet.ChannelKind
	url  *url.URL
	// host is what a send dials, for the creation-time guard.
	host string
}

// parseServiceURL checks raw with the library: the fields each service
// needs are there and well-formed. Its errors never hold a secret of raw.
func parseServiceURL(kind beet.ChannelKind, raw string) (*serviceURL, error) {
	if err := beet.ValidateServiceURL(kind, raw); err != nil {
		return nil, err
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, beet.FieldError("config.url", "is not a URL")
	}
	su := &serviceURL{kind: kind, url: u, host: u.Hostname()}
	bad := func(format string, args ...any) (*serviceURL, error) {
		return nil, beet.FieldError("config.url", "is not a valid %s URL (%s): %s", kind, beet.ServiceURLExample(kind), scrub(fmt.Sprintf(format, args...), u))
	}
	switch kind {
	case beet.ChannelTelegram:
		var c telegram.Config
		if err := libCall(func() error { return c.SetURL(u) }); err != nil {
			return bad("%v", err)
		}
		su.host = telegramAPI
	case beet.ChannelPushover:
		var c pushover.Config
		if err := libCall(func() error { return c.SetURL(u) }); err != nil {
			return bad("%v", err)
		}
		if c.Token == "" || c.User == "" {
			return bad("it needs the application token as password and the user key as host")
		}
		su.host = pushoverAPI
	case beet.ChannelGotify:
		var c gotify.Config
		if err := libCall(func() error { return c.SetURL(u) }); err != nil {
			return bad("%v", err)
		}
		if !(&gotify.DefaultValidator{}).ValidateToken(c.Token) {
			return bad("the application token is 15 characters and starts with A")
		}
	case beet.ChannelMatrix:
		var c matrix.Config
		if err := libCall(func() error { return c.SetURL(u) }); err != nil {
			return bad("%v", err)
		}
		if c.Password == "" {
			return bad("it needs an access token (matrix://:TOKEN@host) or a user and password")
		}
	case beet.ChannelMattermost:
		var c mattermost.Config
		if err := libCall(func() error { return c.SetURL(u) }); err != nil {
			return bad("%v", err)
		}
		if c.Token == "" {
			return bad("it needs the webhook token as path")
		}
	case beet.ChannelGoogleChat:
		var c googlechat.Config
		if err := libCall(func() error { return c.SetURL(u) }); err != nil {
			return bad("%v", err)
		}
		if c.Key == "" || c.Token == "" {
			return bad("it needs the webhook's key and token")
		}
	case beet.ChannelZulip:
		var c zulip.Config
		if err := libCall(func() error { return c.SetURL(u) }); err != nil {
			return bad("%v", err)
		}
		if c.BotMail == "" || c.BotKey == "" || c.Stream == "" {
			return bad("it needs the bot's email and API key, and a stream")
		}
	case beet.ChannelOpsgenie:
		var c opsgenie.Config
		if err := libCall(func() error { return c.SetURL(u) }); err != nil {
			return bad("%v", err)
		}
		if c.APIKey == "" {
			return bad("it needs the API key as path")
		}
	case beet.ChannelRocketChat:
		var c rocketchat.Config
		if err := libCall(func() error { return c.SetURL(u) }); err != nil {
			return bad("%v", err)
		}
	default:
		return nil, beet.FieldError("kind", "%q is not configured by a service URL", kind)
	}
	return su, nil
}

// libCall runs a library function, turning a panic into an error: a
// malformed URL must not take the process down.
func libCall(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the shoutrrr library failed: %v", r)
		}
	}()
	return fn()
}

// scrub cuts every secret-bearing part of a service URL (user, password,
// path segments, query values, a host that is no host name) out of text,
// in plain and escaped forms, so that a library's error can be shown.
func scrub(text string, u *url.URL) string {
	var parts []string
	add := func(v string) {
		for _, p := range []string{v, url.PathEscape(v), url.QueryEscape(v)} {
			if len(p) >= 3 {
				parts = append(parts, p)
			}
		}
	}
	if u.User != nil {
		add(u.User.Username())
		p, _ := u.User.Password()
		add(p)
		add(u.User.Username() + ":" + p)
	}
	for _, seg := range strings.Split(u.Path, "/") {
		add(seg)
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			add(v)
			for _, item := range strings.Split(v, ",") {
				add(item)
			}
		}
	}
	if !strings.ContainsAny(u.Host, ".:") && u.Host != u.Scheme {
		add(u.Host)
	}
	slices.SortFunc(parts, func(a, b string) int { return len(b) - len(a) })
	for _, p := range parts {
		text = strings.ReplaceAll(text, p, "…")
	}
	return text
}

// sendService delivers m to a service-URL channel once.
func (s *Sender) sendService(ctx context.Context, ch *beet.Channel, m *Message) error {
	su, err := parseServiceURL(ch.Kind, ch.Config.URL)
	if err != nil {
		return &SendError{Msg: beet.ErrorMessage(err), Permanent: true}
	}
	switch ch.Kind {
	case beet.ChannelGotify:
		err = s.sendGotify(ctx, su, m)
	case beet.ChannelMattermost:
		err = s.sendMattermost(ctx, su, m)
	case beet.ChannelPushover:
		err = s.sendPushover(ctx, su, m)
	case beet.ChannelRocketChat:
		err = s.sendRocketChat(ctx, su, m)
	case beet.ChannelTelegram:
		err = s.sendTelegram(ctx, su, m)
	case beet.ChannelGoogleChat:
		err = s.sendGoogleChat(ctx, su, m)
	case beet.ChannelZulip:
		err = s.sendZulip(ctx, su, m)
	case beet.ChannelOpsgenie:
		err = s.sendOpsgenie(ctx, su, m)
	case beet.ChannelMatrix:
		err = s.sendMatrix(ctx, su, m)
	}
	if err == nil {
		return nil
	}
	// Receivers' answers and the library's errors may repeat what the URL
	// holds; whatever is shown or stored is scrubbed of it.
	var se *SendError
	if !errors.As(err, &se) {
		se = &SendError{Msg: err.Error()}
	}
	return &SendError{Msg: scrub(se.Msg, su.url), Permanent: se.Permanent, RetryAfter: se.RetryAfter}
}

// body is the message without its title, for services that show the title
// apart.
func (m *Message) body() string {
	b := m.Summary + "\n" + m.When
	if m.Link != "" {
		b += "\n" + m.Link
	}
	return b
}

// ---- Sent by the library, through the guarded transport.

// recorder is the transport given to the library for one send: it sends
// through the Sender's guarded transport under the send's context (the
// library uses its own background contexts) and notes what came back, so
// the outcome can be classified as for the other kinds.
type recorder struct {
	ctx  context.Context
	base http.RoundTripper

	mu         sync.Mutex
	requests   int
	netErr     error
	status     int // the first non-2xx status, if any
	retryAfter time.Duration
	target     string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(r.ctx)
	req.Header.Set("User-Agent", "Beet/"+version.Version)
	res, err := r.base.RoundTrip(req)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	if r.target == "" {
		r.target = req.URL.Scheme + "://" + req.URL.Host + "/"
	}
	if err != nil && r.netErr == nil {
		r.netErr = err
	}
	if res != nil && (res.StatusCode < 200 || res.StatusCode > 299) && r.status == 0 {
		r.status = res.StatusCode
		r.retryAfter = retryAfter(res.Header.Get("Retry-After"), time.Now())
	}
	return res, err
}

// libraryClient is the http.Client a library service gets for one send.
func (s *Sender) libraryClient(ctx context.Context) (*http.Client, *recorder) {
	rec := &recorder{ctx: ctx, base: s.client.Transport}
	return &http.Client{Transport: rec, Timeout: s.client.Timeout, CheckRedirect: s.client.CheckRedirect}, rec
}

// librarySend runs the library's Send and classifies its outcome like a
// post: a network error or a 408, 429 or 5xx answer is worth retrying; a
// private target or another 4xx is refused for good; a failure before any
// request (the library refused the message) is permanent; if every answer
// was a 2xx the receiver has the message, whatever the library thought of
// the answer's body, so it is delivered (sending it again would repeat it).
func librarySend(svc types.Service, rec *recorder, text string, params types.Params) error {
	err := libCall(func() error { return svc.Send(text, &params) })
	if err == nil {
		return nil
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	prefix := "POST " + rec.target + ": "
	switch {
	case rec.netErr != nil:
		var ue *url.Error
		netErr := rec.netErr
		if errors.As(netErr, &ue) {
			netErr = ue.Err
		}
		return &SendError{Msg: prefix + publicNetError(netErr, false), Permanent: errors.Is(netErr, errPrivate)}
	case rec.status != 0:
		retry := rec.status == 408 || rec.status == 429 || rec.status >= 500
		return &SendError{Msg: prefix + "HTTP " + strconv.Itoa(rec.status) + ": " + err.Error(), Permanent: !retry, RetryAfter: rec.retryAfter}
	case rec.requests == 0:
		return &SendError{Msg: "not sent: " + err.Error(), Permanent: true}
	}
	return nil
}

func (s *Sender) sendGotify(ctx context.Context, su *serviceURL, m *Message) error {
	svc := &gotify.Service{}
	if err := libCall(func() error { return svc.Initialize(su.url, util.DiscardLogger) }); err != nil {
		return &SendError{Msg: err.Error(), Permanent: true}
	}
	client, rec := s.libraryClient(ctx)
	hc := svc.GetHTTPClient() // shared with the library's JSON client, so changed in place
	hc.Transport, hc.Timeout, hc.CheckRedirect = client.Transport, client.Timeout, client.CheckRedirect
	params := types.Params{"title": clip(m.Title, 250)}
	if !m.good() {
		params["priority"] = "8"
	}
	return librarySend(svc, rec, m.body(), params)
}

func (s *Sender) sendMattermost(ctx context.Context, su *serviceURL, m *Message) error {
	svc := &mattermost.Service{}
	if err := libCall(func() error { return svc.Initialize(su.url, util.DiscardLogger) }); err != nil {
		return &SendError{Msg: err.Error(), Permanent: true}
	}
	client, rec := s.libraryClient(ctx)
	hc := svc.GetHTTPClient()
	hc.Transport, hc.Timeout, hc.CheckRedirect = client.Transport, client.Timeout, client.CheckRedirect
	return librarySend(svc, rec, clip("**"+m.Title+"**\n"+m.body(), 16000), types.Params{})
}

func (s *Sender) sendPushover(ctx context.Context, su *serviceURL, m *Message) error {
	svc := &pushover.Service{}
	if err := libCall(func() error { return svc.Initialize(su.url, util.DiscardLogger) }); err != nil {
		return &SendError{Msg: err.Error(), Permanent: true}
	}
	client, rec := s.libraryClient(ctx)
	svc.Client = client
	params := types.Params{"title": clip(m.Title, 250)}
	if !m.good() {
		params["priority"] = "1"
	}
	return librarySend(svc, rec, clip(m.body(), 1024), params)
}

func (s *Sender) sendRocketChat(ctx context.Context, su *serviceURL, m *Message) error {
	svc := &rocketchat.Service{}
	client, rec := s.libraryClient(ctx)
	svc.Client = client // Initialize keeps a client that is set
	if err := libCall(func() error { return svc.Initialize(su.url, util.DiscardLogger) }); err != nil {
		return &SendError{Msg: err.Error(), Permanent: true}
	}
	return librarySend(svc, rec, clip("*"+m.Title+"*\n"+m.body(), 5000), types.Params{})
}

// ---- Sent by Beet, from the configuration the library parsed.

func (s *Sender) sendTelegram(ctx context.Context, su *serviceURL, m *Message) error {
	var c telegram.Config
	if err := libCall(func() error { return c.SetURL(su.url) }); err != nil {
		return &SendError{Msg: err.Error(), Permanent: true}
	}
	target := "https://" + telegramAPI + "/bot" + c.Token + "/sendMessage"
	// One message per chat; a retry after a partial failure sends again to
	// the chats that had it (Telegram has no idempotency key).
	for _, chat := range c.Chats {
		payload := map[string]any{
			"chat_id":                  chat,
			"text":                     clip(m.Title+"\n\n"+m.body(), 4096),
			"disable_web_page_preview": !c.Preview,
			"disable_notification":     !c.Notification,
		}
		if err := s.postJSON(ctx, target, payload, m); err != nil {
			return err
		}
	}
	return nil
}

func (s *Sender) sendGoogleChat(ctx context.Context, su *serviceURL, m *Message) error {
	var c googlechat.Config
	if err := libCall(func() error { return c.SetURL(su.url) }); err != nil {
		return &SendError{Msg: err.Error(), Permanent: true}
	}
	q := url.Values{"key": {c.Key}, "token": {c.Token}}
	target := (&url.URL{Scheme: "https", Host: c.Host, Path: c.Path, RawQuery: q.Encode()}).String()
	return s.postJSON(ctx, target, map[string]any{"text": clip("*"+m.Title+"*\n"+m.body(), 4000)}, m)
}

func (s *Sender) sendZulip(ctx context.Context, su *serviceURL, m *Message) error {
	var c zulip.Config
	if err := libCall(func() error { return c.SetURL(su.url) }); err != nil {
		return &SendError{Msg: err.Error(), Permanent: true}
	}
	if c.Topic == "" {
		c.Topic = clip(m.Beet.Name, 60)
	}
	form := zulip.CreatePayload(&c, clip("**"+m.Title+"**\n"+m.body(), 10000))
	h := http.Header{}
	h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(c.BotMail+":"+c.BotKey)))
	// The library keeps only the host name; a self-hosted server may name
	// a port too.
	target := (&url.URL{Scheme: "https", Host: su.url.Host, Path: "/api/v1/messages"}).String()
	return s.post(ctx, target, "application/x-www-form-urlencoded", []byte(form.Encode()), h, m)
}

// sendOpsgenie creates an alert whose alias is the incident key, so a
// retry or a reminder updates the open alert instead of opening another,
// and a recovery closes it.
func (s *Sender) sendOpsgenie(ctx context.Context, su *serviceURL, m *Message) error {
	var c opsgenie.Config
	if err := libCall(func() error { return c.SetURL(su.url) }); err != nil {
		return &SendError{Msg: err.Error(), Permanent: true}
	}
	host := c.Host
	if c.Port != 0 && c.Port != 443 {
		host = net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port)))
	}
	base := "https://" + host + "/v2/alerts"
	h := http.Header{}
	h.Set("Authorization", "GenieKey "+c.APIKey)
	closeAlert := func(alias string) error {
		body, _ := json.Marshal(map[string]any{"source": "Beet", "note": clip(m.Title+". "+m.Summary, 25000)})
		return s.post(ctx, base+"/"+url.PathEscape(alias)+"/close?identifierType=alias", "application/json", body, h, m)
	}
	if m.resolves() {
		return closeAlert(m.IncidentKey)
	}
	priority := c.Priority
	if priority == "" {
		priority = map[bool]string{true: "P5", false: "P2"}[m.good()]
		if m.Event == beet.EventDown {
			priority = "P1"
		}
	}
	alert := map[string]any{
		"message":     clip(m.Title, 130),
		"alias":       clip(m.IncidentKey, 512),
		"description": clip(m.body(), 15000),
		"source":      "Beet",
		"entity":      clip(m.Beet.Name, 512),
		"priority":    priority,
		"details":     map[string]string{"beet_id": strconv.FormatInt(m.Beet.ID, 10), "reason": clip(m.Flip.Reason, 500), "link": m.Link},
	}
	if len(c.Tags) > 0 {
		alert["tags"] = c.Tags
	}
	body, _ := json.Marshal(alert)
	if err := s.post(ctx, base, "application/json", body, h, m); err != nil {
		return err
	}
	if k := m.resolveAfter(); k != "" {
		return closeAlert(k)
	}
	return nil
}

// sendMatrix posts to each room with a transaction ID made of the
// delivery's idempotency key, so a retry of a message a homeserver already
// took is not shown twice.
func (s *Sender) sendMatrix(ctx context.Context, su *serviceURL, m *Message) error {
	var c matrix.Config
	if err := libCall(func() error { return c.SetURL(su.url) }); err != nil {
		return &SendError{Msg: err.Error(), Permanent: true}
	}
	scheme := "https"
	if c.DisableTLS {
		scheme = "http"
	}
	api := scheme + "://" + c.Host + "/_matrix/client/v3"
	if c.User == "" {
		return s.sendMatrixAs(ctx, api, c.Password, c.Rooms, m)
	}
	// Log in once and keep the token: a login per message would leave a
	// new device on the account each time, and a retry under a new token
	// would not be known as one (transaction IDs are kept per token).
	// A refused token (logged out, expired) is replaced once.
	key := api + "\x00" + c.User + "\x00" + c.Password
	for again := false; ; again = true {
		token, err := s.matrixToken(ctx, api, key, c.User, c.Password, m)
		if err != nil {
			return err
		}
		err = s.sendMatrixAs(ctx, api, token, c.Rooms, m)
		var se *SendError
		if !again && errors.As(err, &se) && se.Status == http.StatusUnauthorized {
			s.matrixTokens.CompareAndDelete(key, token)
			continue
		}
		return err
	}
}

// matrixToken returns the access token of the login key (homeserver,
// user, password), logging in if there is none yet. The device ID is
// stable for the user on the homeserver, so logging in again reuses one
// device instead of adding another.
func (s *Sender) matrixToken(ctx context.Context, api, key, user, password string, m *Message) (string, error) {
	if t, ok := s.matrixTokens.Load(key); ok {
		return t.(string), nil
	}
	sum := sha256.Sum256([]byte(api + "\x00" + user))
	var login struct {
		AccessToken string `json:"access_token"`
	}
	body, _ := json.Marshal(map[string]any{"type": "m.login.password",
		"identifier": map[string]string{"type": "m.id.user", "user": user}, "password": password,
		"device_id": "BEET" + strings.ToUpper(hex.EncodeToString(sum[:5])), "initial_device_display_name": "Beet"})
	if err := s.do(ctx, http.MethodPost, api+"/login", "application/json", body, nil, m, &login); err != nil {
		return "", err
	}
	if login.AccessToken == "" {
		return "", &SendError{Msg: "matrix: the login gave no access token"}
	}
	s.matrixTokens.Store(key, login.AccessToken)
	return login.AccessToken, nil
}

// sendMatrixAs posts m to the rooms (every joined room when none are
// given) with the access token.
func (s *Sender) sendMatrixAs(ctx context.Context, api, token string, rooms []string, m *Message) error {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+token)
	if len(rooms) == 0 {
		var joined struct {
			JoinedRooms []string `json:"joined_rooms"`
		}
		if err := s.do(ctx, http.MethodGet, api+"/joined_rooms", "", nil, h, m, &joined); err != nil {
			return err
		}
		rooms = joined.JoinedRooms
	}
	content, _ := json.Marshal(map[string]string{"msgtype": "m.text", "body": clip(m.Title+"\n\n"+m.body(), 30000)})
	for i, room := range rooms {
		room = strings.TrimSpace(room)
		if room != "" && room[0] != '!' && room[0] != '#' {
			room = "#" + room // the library's form: a bare name is an alias
		}
		var joined struct {
			RoomID string `json:"room_id"`
		}
		if err := s.do(ctx, http.MethodPost, api+"/join/"+url.PathEscape(room), "application/json", []byte("{}"), h, m, &joined); err != nil {
			return err
		}
		txn := m.IdempotencyKey + "-" + strconv.Itoa(i)
		target := api + "/rooms/" + url.PathEscape(joined.RoomID) + "/send/m.room.message/" + url.PathEscape(txn)
		if err := s.do(ctx, http.MethodPut, target, "application/json", content, h, m, nil); err != nil {
			return err
		}
	}
	return nil
}
