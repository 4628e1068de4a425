package notify_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/notify"
	"github.com/beethq/beet/internal/testlog"
)

// serviceCase is one service-URL kind and a fake of its API, just enough
// of it to take a message the way the real service does.
type serviceCase struct {
	kind beet.ChannelKind
	tls  bool
	// route lists the fixed API hosts (host:443) sent to the fake, for the
	// services whose URL names no host.
	route []string
	url   func(host string) string
	// secrets must never show outside the requests to the service.
	secrets []string
	// message reports whether r carries the message (other requests, such
	// as Matrix's join, are answered with other).
	message func(r *http.Request) bool
	// authorized checks the credential the URL holds, as the service would.
	authorized func(r *http.Request, body []byte) bool
	ok         string
	okStatus   int
	other      func(w http.ResponseWriter, r *http.Request)
}

const (
	gotifyToken   = "Agotifysecret9Z"
	mmToken       = "mmsecrethooktoken42"
	rcTokenA      = "rcsecretTokenA1"
	rcTokenB      = "rcsecretTokenB2"
	zulipKey      = "zulipsecretkey77"
	matrixToken   = "matrixsecrettoken99"
	gcKey         = "gckeysecret11"
	gcToken       = "gctokensecret22"
	opsgenieKey   = "opsgeniesecretkey33"
	telegramToken = "AAHtelegramsecret_0123456789abcdefghij"
	poAppToken    = "posecretapptoken0123456789abcd"
	poUserKey     = "uposecretuserkey0123456789abcd"
)

func serviceCases() []serviceCase {
	form := func(body []byte) url.Values { v, _ := url.ParseQuery(string(body)); return v }
	return []serviceCase{
		{kind: beet.ChannelGotify,
			url:     func(h string) string { return "gotify://" + h + "/" + gotifyToken + "?disabletls=yes" },
			secrets: []string{gotifyToken},
			message: func(r *http.Request) bool { return r.Method == "POST" && r.URL.Path == "/message" },
			authorized: func(r *http.Request, _ []byte) bool {
				return r.URL.Query().Get("token") == gotifyToken
			},
			ok: `{"id":1,"appid":1,"message":"m","title":"t","priority":8,"date":"2026-01-01T00:00:00Z"}`},
		{kind: beet.ChannelMattermost,
			url:        func(h string) string { return "mattermost://" + h + "/" + mmToken + "?disabletls=yes" },
			secrets:    []string{mmToken},
			message:    func(r *http.Request) bool { return r.Method == "POST" && strings.HasPrefix(r.URL.Path, "/hooks/") },
			authorized: func(r *http.Request, _ []byte) bool { return r.URL.Path == "/hooks/"+mmToken },
			ok:         "ok"},
		{kind: beet.ChannelRocketChat, tls: true,
			url:        func(h string) string { return "rocketchat://" + h + "/" + rcTokenA + "/" + rcTokenB },
			secrets:    []string{rcTokenA, rcTokenB},
			message:    func(r *http.Request) bool { return r.Method == "POST" && strings.HasPrefix(r.URL.Path, "/hooks/") },
			authorized: func(r *http.Request, _ []byte) bool { return r.URL.Path == "/hooks/"+rcTokenA+"/"+rcTokenB },
			ok:         `{"success":true}`},
		{kind: beet.ChannelZulip, tls: true,
			url: func(h string) string {
				return "zulip://beet-bot%40example.com:" + zulipKey + "@" + h + "/?stream=alerts&topic=beet"
			},
			secrets: []string{zulipKey},
			message: func(r *http.Request) bool { return r.Method == "POST" && r.URL.Path == "/api/v1/messages" },
			authorized: func(r *http.Request, body []byte) bool {
				u, p, ok := r.BasicAuth()
				f := form(body)
				return ok && u == "beet-bot@example.com" && p == zulipKey && f.Get("to") == "alerts" && f.Get("type") == "stream"
			},
			ok: `{"result":"success","msg":"","id":42}`},
		{kind: beet.ChannelMatrix,
			url: func(h string) string {
				return "matrix://:" + matrixToken + "@" + h + "/?rooms=!ops:example.com&disableTLS=yes"
			},
			secrets: []string{matrixToken},
			message: func(r *http.Request) bool {
				return r.Method == "PUT" && strings.Contains(r.URL.Path, "/rooms/!ops:example.com/send/m.room.message/")
			},
			authorized: func(r *http.Request, _ []byte) bool { return r.Header.Get("Authorization") == "Bearer "+matrixToken },
			ok:         `{"event_id":"$1"}`,
			other: func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer "+matrixToken {
					http.Error(w, `{"errcode":"M_UNKNOWN_TOKEN"}`, http.StatusUnauthorized)
					return
				}
				if r.Method == "POST" && strings.HasPrefix(r.URL.Path, "/_matrix/client/v3/join/") {
					io.WriteString(w, `{"room_id":"!ops:example.com"}`)
					return
				}
				http.NotFound(w, r)
			}},
		{kind: beet.ChannelGoogleChat, tls: true,
			url: func(h string) string {
				return "googlechat://" + h + "/v1/spaces/AAAA/messages?key=" + gcKey + "&token=" + gcToken
			},
			secrets: []string{gcKey, gcToken},
			message: func(r *http.Request) bool { return r.Method == "POST" && r.URL.Path == "/v1/spaces/AAAA/messages" },
			authorized: func(r *http.Request, _ []byte) bool {
				return r.URL.Query().Get("key") == gcKey && r.URL.Query().Get("token") == gcToken
			},
			ok: `{"name":"spaces/AAAA/messages/1"}`},
		{kind: beet.ChannelOpsgenie, tls: true,
			url:     func(h string) string { return "opsgenie://" + h + "/" + opsgenieKey },
			secrets: []string{opsgenieKey},
			message: func(r *http.Request) bool { return r.Method == "POST" && r.URL.Path == "/v2/alerts" },
			authorized: func(r *http.Request, _ []byte) bool {
				return r.Header.Get("Authorization") == "GenieKey "+opsgenieKey
			},
			ok: `{"result":"Request will be processed","took":0.1,"requestId":"r1"}`, okStatus: 202},
		{kind: beet.ChannelTelegram, tls: true, route: []string{"api.telegram.org:443"},
			url:     func(string) string { return "telegram://123456789:" + telegramToken + "@telegram?chats=@beetalerts" },
			secrets: []string{telegramToken},
			message: func(r *http.Request) bool { return r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/sendMessage") },
			authorized: func(r *http.Request, _ []byte) bool {
				return r.URL.Path == "/bot123456789:"+telegramToken+"/sendMessage"
			},
			ok: `{"ok":true,"result":{"message_id":1}}`},
		{kind: beet.ChannelPushover, tls: true, route: []string{"api.pushover.net:443"},
			url: func(string) string {
				return "pushover://shoutrrr:" + poAppToken + "@" + poUserKey + "/?devices=phone"
			},
			secrets: []string{poAppToken, poUserKey},
			message: func(r *http.Request) bool { return r.Method == "POST" && r.URL.Path == "/1/messages.json" },
			authorized: func(r *http.Request, body []byte) bool {
				f := form(body)
				return f.Get("token") == poAppToken && f.Get("user") == poUserKey
			},
			ok: `{"status":1,"request":"r1"}`},
	}
}

// fakeService serves a serviceCase on loopback. It answers the first
// message with a 500 whose body repeats the request's URL (as some
// servers do), so a secret in the URL would show if Beet repeated the
// answer unscrubbed; later messages are accepted.
type fakeService struct {
	*httptest.Server
	tc       serviceCase
	mu       sync.Mutex
	attempts int      // message requests
	accepted [][]byte // bodies of accepted messages
	txns     map[string]bool
	requests int
}

func newFakeService(t *testing.T, tc serviceCase) *fakeService {
	fs := &fakeService{tc: tc, txns: map[string]bool{}}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		fs.mu.Lock()
		defer fs.mu.Unlock()
		fs.requests++
		if !tc.message(r) {
			if tc.other != nil {
				tc.other(w, r)
				return
			}
			http.NotFound(w, r)
			return
		}
		if !tc.authorized(r, body) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		fs.attempts++
		if fs.attempts == 1 {
			http.Error(w, "internal error while handling "+r.URL.String(), http.StatusInternalServerError)
			return
		}
		// Matrix drops a transaction it has seen; the others have none.
		if tc.kind == beet.ChannelMatrix {
			if fs.txns[r.URL.Path] {
				io.WriteString(w, tc.ok)
				return
			}
			fs.txns[r.URL.Path] = true
		}
		fs.accepted = append(fs.accepted, body)
		w.Header().Set("Content-Type", "application/json")
		if tc.okStatus != 0 {
			w.WriteHeader(tc.okStatus)
		}
		io.WriteString(w, tc.ok)
	})
	if tc.tls {
		fs.Server = httptest.NewTLSServer(h)
	} else {
		fs.Server = httptest.NewServer(h)
	}
	t.Cleanup(fs.Close)
	return fs
}

func (fs *fakeService) host() string { return fs.Listener.Addr().String() }

func (fs *fakeService) counts() (requests, attempts int, accepted [][]byte) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.requests, fs.attempts, append([][]byte(nil), fs.accepted...)
}

// TestServiceKindsDeliverOnce sends a flip to each service-URL kind's fake
// on loopback through the outbox: the first attempt meets a 500 and is
// retried, the message arrives exactly once, and no secret of the URL
// shows in the delivery log or the logs.
func TestServiceKindsDeliverOnce(t *testing.T) {
	for _, tc := range serviceCases() {
		t.Run(string(tc.kind), func(t *testing.T) {
			r := newRig(t, "sqlite")
			fs := newFakeService(t, tc)
			s := notify.NewSender(notify.SenderOptions{AllowPrivate: true, BaseURL: "https://beet.example.com"})
			notify.UseTestServer(s, fs.Server, tc.route...)
			var logs testlog.Buffer
			w := r.worker(func(w *notify.Worker) { w.Sender = s; w.Log = testlog.New(&logs) })
			ch := r.channel(tc.kind, beet.ChannelConfig{URL: tc.url(fs.host())})
			r.down()

			if _, err := w.Once(context.Background()); err != nil {
				t.Fatal(err)
			}
			ds, err := r.db.FindDeliveries(context.Background(), ch.ID, 0)
			if err != nil || len(ds) != 1 {
				t.Fatalf("deliveries %v, %v", ds, err)
			}
			if d := ds[0]; d.Status != beet.DeliveryPending || !strings.Contains(d.Error, "500") {
				t.Fatalf("after the 500: status %s, error %q; want pending with the 500 named", d.Status, d.Error)
			}
			firstErr := ds[0].Error

			ds = r.drain(w, ch)
			if d := ds[0]; len(ds) != 1 || d.Status != beet.DeliveryDelivered || d.Attempts != 2 {
				t.Fatalf("deliveries %+v; want one delivered on its second attempt", ds[0])
			}
			// Nothing is sent again once delivered.
			if _, err := w.Once(context.Background()); err != nil {
				t.Fatal(err)
			}
			_, attempts, accepted := fs.counts()
			if attempts != 2 || len(accepted) != 1 {
				t.Fatalf("the service got %d message requests and took %d; want 2 and exactly 1", attempts, len(accepted))
			}
			body := string(accepted[0])
			if form, err := url.ParseQuery(body); err == nil && strings.Contains(body, "=") {
				body = fmt.Sprint(form)
			}
			if !strings.Contains(body, "Checkout succeeded") || !strings.Contains(body, "down") {
				t.Fatalf("the message does not name the beet and its state: %s", body)
			}
			for _, secret := range tc.secrets {
				for where, text := range map[string]string{"delivery error": firstErr, "logs": logs.String()} {
					if strings.Contains(text, secret) {
						t.Fatalf("the %s shows the URL's secret %q:\n%s", where, secret, text)
					}
				}
			}
		})
	}
}

// TestServiceKindsRefusePrivateTargets: the library's requests go through
// Beet's guarded dialer, so a service URL on loopback is refused at
// creation and at send time, for good, and the service hears nothing.
func TestServiceKindsRefusePrivateTargets(t *testing.T) {
	r := newRig(t, "sqlite")
	for _, tc := range serviceCases() {
		if tc.route != nil {
			continue // fixed public hosts
		}
		t.Run(string(tc.kind), func(t *testing.T) {
			fs := newFakeService(t, tc)
			raw := tc.url(fs.host())
			err := notify.CheckTarget(context.Background(), raw, false)
			if beet.ErrorCode(err) != beet.EVALIDATION || !strings.Contains(beet.ErrorMessage(err), "private") {
				t.Fatalf("creation check: %v; want a refusal of the private target", err)
			}
			s := notify.NewSender(notify.SenderOptions{AllowPrivate: false})
			notify.UseTestServer(s, fs.Server)
			ch := &beet.Channel{Kind: tc.kind, Config: beet.ChannelConfig{URL: raw}}
			f := &beet.Flip{At: time.Now(), From: beet.StatusUp, To: beet.StatusDown, Kind: beet.FlipSilence, Reason: "silent"}
			m := &notify.Message{Event: beet.EventDown, Beet: r.beet, Flip: f, Title: "Checkout succeeded is down",
				Summary: "No event.", When: "now", IdempotencyKey: "beet-delivery-1", IncidentKey: "beet-1-incident-1"}
			err = s.Send(context.Background(), ch, m)
			var se *notify.SendError
			if !errors.As(err, &se) || !se.Permanent || !strings.Contains(se.Msg, "private") {
				t.Fatalf("send: %v; want a permanent refusal of the private target", err)
			}
			if n, _, _ := fs.counts(); n != 0 {
				t.Fatalf("the service got %d requests; the guard should have stopped the first", n)
			}
			for _, secret := range tc.secrets {
				if strings.Contains(se.Msg, secret) {
					t.Fatalf("the error shows the secret: %s", se.Msg)
				}
			}
		})
	}
}

// TestServiceURLChecks: a URL the library refuses is refused at creation
// with a reason that does not repeat its secret.
func TestServiceURLChecks(t *testing.T) {
	for _, c := range []struct {
		kind beet.ChannelKind
		url  string
		want string
	}{
		{beet.ChannelTelegram, "telegram://123456789:AAHsecretsecretsecret@telegram", "no channels"},
		{beet.ChannelTelegram, "telegram://notatoken:AAH%20secretsecretsecret@telegram?chats=@x", "invalid telegram token"},
		{beet.ChannelGotify, "gotify://gotify.example.com/Bsecretsecret12", "15 characters"},
		{beet.ChannelZulip, "zulip://bot%40example.com:zsecretsecret@example.zulipchat.com/", "stream"},
		{beet.ChannelMatrix, "matrix://matrix.example.com/?rooms=!a:b", "access token"},
		{beet.ChannelOpsgenie, "opsgenie://api.opsgenie.com/", "API key"},
		{beet.ChannelGoogleChat, "googlechat://chat.googleapis.com/v1/spaces/A/messages?key=gsecretsecret", "key and token"},
		{beet.ChannelPushover, "pushover://shoutrrr:psecretsecret@/", "must be a pushover:// URL"},
		{beet.ChannelMattermost, "https://mattermost.example.com/hooks/msecretsecret", "must be a mattermost:// URL"},
	} {
		err := notify.CheckTarget(context.Background(), c.url, true)
		if c.url[:5] == "https" {
			err = (&beet.Channel{Kind: c.kind, Name: "x", Config: beet.ChannelConfig{URL: c.url}}).Validate()
		} else if err == nil {
			err = (&beet.Channel{Kind: c.kind, Name: "x", Config: beet.ChannelConfig{URL: c.url}}).Validate()
		}
		if beet.ErrorCode(err) != beet.EVALIDATION || !strings.Contains(beet.ErrorMessage(err), c.want) {
			t.Errorf("%s: %v; want a refusal that says %q", c.url, err, c.want)
			continue
		}
		for _, part := range strings.FieldsFunc(c.url, func(r rune) bool { return strings.ContainsRune(":/@?=&", r) }) {
			if strings.Contains(part, "secret") && strings.Contains(beet.ErrorMessage(err), part) {
				t.Errorf("%s: the refusal shows the secret: %v", c.url, err)
			}
		}
	}
	for _, tc := range serviceCases() {
		if err := notify.CheckTarget(context.Background(), tc.url("service.example.com"), true); err != nil {
			t.Errorf("%s: %v", tc.kind, err)
		}
	}
	// The examples the form and the errors show are valid URLs.
	for _, k := range beet.ServiceURLKinds {
		ex := beet.ServiceURLExample(k)
		if err := firstError((&beet.Channel{Kind: k, Name: "x", Config: beet.ChannelConfig{URL: ex}}).Validate(),
			notify.CheckTarget(context.Background(), ex, true)); err != nil {
			t.Errorf("the %s example %s is refused: %v", k, ex, err)
		}
	}
}

// TestOpsgenieAlertLifecycle: the alert's alias is the incident key, and
// the recovery closes that alert by its alias, as PagerDuty's resolve.
func TestOpsgenieAlertLifecycle(t *testing.T) {
	r := newRig(t, "sqlite")
	var mu sync.Mutex
	var got []string // method, path and alias of each request
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("Authorization") != "GenieKey "+opsgenieKey {
			http.Error(w, `{"message":"Key format is not valid!"}`, http.StatusUnprocessableEntity)
			return
		}
		var body struct{ Alias, Message, Source string }
		_ = json.NewDecoder(req.Body).Decode(&body)
		mu.Lock()
		got = append(got, req.Method+" "+req.URL.RequestURI()+" alias="+body.Alias+" source="+body.Source)
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"result":"Request will be processed","took":0.1,"requestId":"r"}`)
	}))
	t.Cleanup(srv.Close)
	s := notify.NewSender(notify.SenderOptions{AllowPrivate: true})
	notify.UseTestServer(s, srv)
	w := r.worker(func(w *notify.Worker) { w.Sender = s })
	ch := r.channel(beet.ChannelOpsgenie, beet.ChannelConfig{URL: "opsgenie://" + srv.Listener.Addr().String() + "/" + opsgenieKey})
	down := r.down()
	r.drain(w, ch)
	r.up()
	r.drain(w, ch)
	alias := "beet-" + strconv.FormatInt(r.beet.ID, 10) + "-incident-" + strconv.FormatInt(down.ID, 10)
	want := []string{
		"POST /v2/alerts alias=" + alias + " source=Beet",
		"POST /v2/alerts/" + alias + "/close?identifierType=alias alias= source=Beet",
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("Opsgenie got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestTestMessagesCloseTheirIncident: a channel's test message to
// PagerDuty or Opsgenie opens an incident only to show the channel works:
// it is resolved (closed) at once by the same key, so no one on call is
// left with a test incident to close by hand.
func TestTestMessagesCloseTheirIncident(t *testing.T) {
	r := newRig(t, "sqlite")
	var mu sync.Mutex
	var got []string // method, path and key of each request
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body struct {
			Alias       string
			EventAction string `json:"event_action"`
			DedupKey    string `json:"dedup_key"`
		}
		_ = json.NewDecoder(req.Body).Decode(&body)
		mu.Lock()
		got = append(got, req.Method+" "+req.URL.RequestURI()+" "+body.Alias+body.EventAction+" "+body.DedupKey)
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"status":"success","result":"Request will be processed"}`)
	}))
	t.Cleanup(srv.Close)
	s := notify.NewSender(notify.SenderOptions{AllowPrivate: true})
	notify.UseTestServer(s, srv)
	notify.SetPagerDutyURL(s, srv.URL+"/v2/enqueue")
	w := r.worker(func(w *notify.Worker) { w.Sender = s })
	og := r.channel(beet.ChannelOpsgenie, beet.ChannelConfig{URL: "opsgenie://" + srv.Listener.Addr().String() + "/" + opsgenieKey})
	pd := r.channel(beet.ChannelPagerDuty, beet.ChannelConfig{RoutingKey: "R0UT1NGKEY0123456789012345678901"})
	var keys []string
	for _, ch := range []*beet.Channel{og, pd} {
		d := &beet.Delivery{ChannelID: ch.ID, Event: beet.EventTest, CreatedAt: time.Now()}
		if err := r.db.CreateDelivery(t.Context(), d); err != nil {
			t.Fatal(err)
		}
		if ds := r.drain(w, ch); ds[0].Status != beet.DeliveryDelivered {
			t.Fatalf("test message: %+v", ds[0])
		}
		keys = append(keys, d.IncidentKey())
	}
	want := []string{
		"POST /v2/alerts " + keys[0] + " ",
		"POST /v2/alerts/" + keys[0] + "/close?identifierType=alias  ",
		"POST /v2/enqueue trigger " + keys[1],
		"POST /v2/enqueue resolve " + keys[1],
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("receivers got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestMatrixLoginAndJoinedRooms: with a user and password, Beet logs in
// for an access token; without rooms, it posts to every joined room.
func TestMatrixLoginAndJoinedRooms(t *testing.T) {
	r := newRig(t, "sqlite")
	const password, issued = "matrixpassword1", "syt_issued_token"
	var mu sync.Mutex
	sent := map[string]string{} // room → body
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if req.URL.Path == "/_matrix/client/v3/login" {
			var in struct {
				Type       string
				Identifier struct{ Type, User string }
				Password   string
			}
			if json.Unmarshal(body, &in) != nil || in.Type != "m.login.password" || in.Identifier.User != "beet" || in.Password != password {
				http.Error(w, `{"errcode":"M_FORBIDDEN"}`, http.StatusForbidden)
				return
			}
			io.WriteString(w, `{"access_token":"`+issued+`","user_id":"@beet:example.com"}`)
			return
		}
		if req.Header.Get("Authorization") != "Bearer "+issued {
			http.Error(w, `{"errcode":"M_UNKNOWN_TOKEN"}`, http.StatusUnauthorized)
			return
		}
		switch {
		case req.Method == "GET" && req.URL.Path == "/_matrix/client/v3/joined_rooms":
			io.WriteString(w, `{"joined_rooms":["!a:example.com","!b:example.com"]}`)
		case req.Method == "POST" && strings.HasPrefix(req.URL.Path, "/_matrix/client/v3/join/"):
			io.WriteString(w, `{"room_id":"`+strings.TrimPrefix(req.URL.Path, "/_matrix/client/v3/join/")+`"}`)
		case req.Method == "PUT" && strings.Contains(req.URL.Path, "/send/m.room.message/"):
			room := strings.Split(strings.TrimPrefix(req.URL.Path, "/_matrix/client/v3/rooms/"), "/")[0]
			mu.Lock()
			sent[room] = string(body)
			mu.Unlock()
			io.WriteString(w, `{"event_id":"$e"}`)
		default:
			http.NotFound(w, req)
		}
	}))
	t.Cleanup(srv.Close)
	s := notify.NewSender(notify.SenderOptions{AllowPrivate: true})
	w := r.worker(func(w *notify.Worker) { w.Sender = s })
	ch := r.channel(beet.ChannelMatrix, beet.ChannelConfig{URL: "matrix://beet:" + password + "@" + srv.Listener.Addr().String() + "/?disableTLS=yes"})
	r.down()
	if ds := r.drain(w, ch); ds[0].Status != beet.DeliveryDelivered {
		t.Fatalf("delivery %+v", ds[0])
	}
	mu.Lock()
	defer mu.Unlock()
	for _, room := range []string{"!a:example.com", "!b:example.com"} {
		var msg struct{ Msgtype, Body string }
		if json.Unmarshal([]byte(sent[room]), &msg) != nil || msg.Msgtype != "m.text" || !strings.Contains(msg.Body, "Checkout succeeded is down") {
			t.Errorf("room %s got %q", room, sent[room])
		}
	}
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestMatrixLogsInOncePerChannel: with a user and password, Beet logs in
// once, as one device, and sends every message with that access token
// (a homeserver keeps transaction IDs per token and device, so a retry is
// dropped as a duplicate), logging in again only when the token is
// refused.
func TestMatrixLogsInOncePerChannel(t *testing.T) {
	r := newRig(t, "sqlite")
	var mu sync.Mutex
	logins, token, sent := 0, "", 0
	devices := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		mu.Lock()
		defer mu.Unlock()
		if req.URL.Path == "/_matrix/client/v3/login" {
			var in struct {
				DeviceID string `json:"device_id"`
			}
			json.Unmarshal(body, &in)
			devices[in.DeviceID] = true
			logins++
			token = "syt_token_" + strconv.Itoa(logins)
			io.WriteString(w, `{"access_token":"`+token+`","user_id":"@beet:example.com"}`)
			return
		}
		if req.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, `{"errcode":"M_UNKNOWN_TOKEN"}`, http.StatusUnauthorized)
			return
		}
		switch {
		case req.Method == "POST" && strings.HasPrefix(req.URL.Path, "/_matrix/client/v3/join/"):
			io.WriteString(w, `{"room_id":"!a:example.com"}`)
		case req.Method == "PUT" && strings.Contains(req.URL.Path, "/send/m.room.message/"):
			sent++
			io.WriteString(w, `{"event_id":"$e"}`)
		default:
			http.NotFound(w, req)
		}
	}))
	t.Cleanup(srv.Close)
	w := r.worker(func(w *notify.Worker) { w.Sender = notify.NewSender(notify.SenderOptions{AllowPrivate: true}) })
	ch := r.channel(beet.ChannelMatrix, beet.ChannelConfig{URL: "matrix://beet:pw@" + srv.Listener.Addr().String() + "/?rooms=!a:example.com&disableTLS=yes"})
	r.down()
	r.up()
	r.down()
	for _, d := range r.drain(w, ch) {
		if d.Status != beet.DeliveryDelivered || d.Attempts != 1 {
			t.Fatalf("delivery %+v; want delivered at once", d)
		}
	}
	mu.Lock()
	if logins != 1 || sent != 3 {
		t.Errorf("%d logins for %d messages; want 1 for 3", logins, sent)
	}
	token = "revoked" // the homeserver logged the device out
	mu.Unlock()
	r.up()
	for _, d := range r.drain(w, ch) {
		if d.Status != beet.DeliveryDelivered || d.Attempts != 1 {
			t.Fatalf("delivery %+v; want delivered at once after logging in again", d)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if logins != 2 || sent != 4 || len(devices) != 1 || devices[""] {
		t.Errorf("%d logins, %d messages, devices %v; want a second login as the same device, 4 messages", logins, sent, devices)
	}
}
