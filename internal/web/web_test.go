package web_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testlog"
)

// startApp runs the whole of Beet (store, ingestion, API, dashboard) on a
// fresh SQLite file and a free loopback port.
func startApp(t *testing.T, mod func(*config.Config)) *app.App {
	t.Helper()
	cfg := config.Default()
	cfg.DatabaseURL = "sqlite://" + filepath.Join(t.TempDir(), "beet.db")
	cfg.SpoolPath = filepath.Join(t.TempDir(), "beet.spool")
	// A port of its own, known before start, so the base URL (in the
	// snippets and ingestion URLs) points at this server.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Listen = ln.Addr().String()
	cfg.BaseURL = "http://" + cfg.Listen
	ln.Close()
	cfg.CleanupInterval = 0
	cfg.ShutdownTimeout = 5 * time.Second
	if mod != nil {
		mod(&cfg)
	}
	var a *app.App
	ctx := context.Background()
	logs := &testlog.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("app log:\n%s", logs.String())
		}
	})
	a, err = app.New(ctx, cfg, app.Options{Log: slog.New(slog.NewTextHandler(logs, nil)), PasswordParams: &cheapPasswords})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(ctx); err != nil {
		a.Stop(ctx)
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Stop(context.Background()) })
	return a
}

// cheapPasswords keep argon2id's shape at a cost that does not time out
// under -race on a busy machine; production uses the default cost.
var cheapPasswords = service.PasswordParams{Time: 1, Memory: 1024, Threads: 1}

// browser is an HTTP client with a cookie jar that does not follow
// redirects, so tests see each answer; it sends what a browser's
// same-origin form post sends.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newBrowser(t *testing.T, base string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: base, c: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type answer struct {
	status   int
	header   http.Header
	body     string
	location string
}

func (b *browser) do(method, path string, form url.Values, hdr map[string]string) answer {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.Header.Set("Origin", b.base)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(data), resp.Header.Get("Location")}
}

func (b *browser) get(path string) answer { b.t.Helper(); return b.do("GET", path, nil, nil) }
func (b *browser) post(path string, form url.Values) answer {
	b.t.Helper()
	return b.do("POST", path, form, nil)
}

func want(t *testing.T, what string, a answer, status int, location string) {
	t.Helper()
	if a.status != status || (location != "" && a.location != location) {
		t.Fatalf("%s: %d Location %q, want %d %q\n%.600s", what, a.status, a.location, status, location, a.body)
	}
}

func setup(t *testing.T, b *browser, email string) {
	t.Helper()
	a := b.post("/setup", url.Values{"email": {email}, "password": {"correct horse"}, "password2": {"correct horse"}, "plan": {"free"}})
	want(t, "setup", a, http.StatusSeeOther, "/beets/new?welcome=1")
}

func TestFirstRunSignInSignOut(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())

	want(t, "dashboard on a new install", b.get("/"), http.StatusSeeOther, "/setup")
	want(t, "sign-in page on a new install", b.get("/login"), http.StatusSeeOther, "/setup")
	r := b.post("/setup", url.Values{"email": {"ada@example.com"}, "password": {"correct horse"}, "password2": {"correct hors"}})
	want(t, "setup with two different passwords", r, http.StatusUnprocessableEntity, "")
	if !strings.Contains(r.body, "The two passwords differ.") || !strings.Contains(r.body, `value="ada@example.com"`) {
		t.Errorf("the form does not say what is wrong or lost the email:\n%s", r.body)
	}

	r = b.post("/setup", url.Values{"email": {"ada@example.com"}, "password": {"correct horse"}, "password2": {"correct horse"}, "plan": {"free"}})
	want(t, "setup", r, http.StatusSeeOther, "/beets/new?welcome=1")
	c := r.header.Get("Set-Cookie")
	for _, attr := range []string{"beet_session=", "HttpOnly", "SameSite=Lax", "Path=/"} {
		if !strings.Contains(c, attr) {
			t.Errorf("session cookie %q lacks %s", c, attr)
		}
	}
	if strings.Contains(c, "Secure") {
		t.Errorf("session cookie %q is Secure on plain http: the browser would never send it", c)
	}
	if r := b.get("/"); r.status != 200 || !strings.Contains(r.body, "No beets yet") {
		t.Fatalf("dashboard after setup: %d\n%.500s", r.status, r.body)
	}
	want(t, "setup again", b.get("/setup"), http.StatusSeeOther, "/login")
	// A second setup, from another browser, cannot take over.
	other := newBrowser(t, a.URL())
	want(t, "second setup", other.post("/setup", url.Values{"email": {"eve@example.com"}, "password": {"correct horse"},
		"password2": {"correct horse"}}), http.StatusSeeOther, "/login")
	want(t, "the other browser is not signed in", other.get("/"), http.StatusSeeOther, "/login")

	// Sign-up is closed by default: no link, no page, no form.
	want(t, "sign-up page", b.get("/signup"), http.StatusNotFound, "")
	want(t, "sign-up form", other.post("/signup", url.Values{"email": {"eve@example.com"}, "password": {"correct horse"},
		"password2": {"correct horse"}}), http.StatusNotFound, "")
	want(t, "sign out", b.post("/logout", url.Values{}), http.StatusSeeOther, "/login?out=1")
	if login := b.get("/login").body; strings.Contains(login, "/signup") || !strings.Contains(login, "beet accounts set-password") {
		t.Error("the sign-in page offers sign-up while it is closed, or does not say how a password is reset")
	}
	want(t, "dashboard after sign-out", b.get("/"), http.StatusSeeOther, "/login")
	want(t, "a beet page after sign-out", b.get("/beets/1"), http.StatusSeeOther, "/login?next=%2Fbeets%2F1")

	r = b.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"wrong horse"}})
	want(t, "wrong password", r, http.StatusUnauthorized, "")
	if !strings.Contains(r.body, "wrong email or password") {
		t.Errorf("no message for a wrong password:\n%.500s", r.body)
	}
	want(t, "sign in", b.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"correct horse"}, "next": {"/account"}}),
		http.StatusSeeOther, "/account")
	if r := b.get("/account"); r.status != 200 || !strings.Contains(r.body, "ada@example.com") || !strings.Contains(r.body, "3 years") {
		t.Fatalf("account page: %d\n%.500s", r.status, r.body)
	}
	// A next that leaves the site is ignored.
	b2 := newBrowser(t, a.URL())
	want(t, "sign in with an outside next", b2.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"correct horse"},
		"next": {"//evil.example/"}}), http.StatusSeeOther, "/")
}

func TestLoginThrottled(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	guess := newBrowser(t, a.URL())
	for i := range 10 {
		want(t, "guess", guess.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"guess" + string(rune('a'+i))}}),
			http.StatusUnauthorized, "")
	}
	r := guess.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"correct horse"}})
	want(t, "right password after 10 guesses", r, http.StatusTooManyRequests, "")
	if !regexp.MustCompile(`try again in 1[45] min`).MatchString(r.body) {
		t.Errorf("no wait in the message:\n%.600s", r.body)
	}
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 800 || s > 900 {
		t.Errorf("Retry-After %q, want the seconds left of the 15 min", r.header.Get("Retry-After"))
	}
}

func TestSecureCookieBehindHTTPS(t *testing.T) {
	a := startApp(t, func(c *config.Config) { c.BaseURL = "https://beet.example.com" })
	b := newBrowser(t, a.URL())
	r := b.post("/setup", url.Values{"email": {"ada@example.com"}, "password": {"correct horse"}, "password2": {"correct horse"}})
	c := r.header.Get("Set-Cookie")
	if !strings.HasPrefix(c, "__Host-beet_session=") || !strings.Contains(c, "Secure") || !strings.Contains(c, "HttpOnly") {
		t.Errorf("cookie behind an https base URL = %q, want __Host- and Secure", c)
	}
	if r.header.Get("Strict-Transport-Security") == "" {
		t.Error("no HSTS behind an https base URL")
	}
}

func TestSecurityHeadersAndErrors(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	for _, path := range []string{"/setup", "/nope", "/static/app.js"} {
		r := b.get(path)
		h := r.header
		csp := h.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s: CSP %q", path, csp)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") == "" || h.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: headers %v", path, h)
		}
	}
	r := b.get("/nope")
	if r.status != 404 || !strings.Contains(r.header.Get("Content-Type"), "text/html") || !strings.Contains(r.body, "There is no page here.") {
		t.Errorf("unknown page: %d %s\n%.300s", r.status, r.header.Get("Content-Type"), r.body)
	}
	// The API keeps its JSON errors and the ingestion endpoint its GIF;
	// neither gets the dashboard's headers.
	r = b.get("/api/v1/nope")
	if r.status != 404 || !strings.Contains(r.body, `"code":"not_found"`) || r.header.Get("Content-Security-Policy") != "" {
		t.Errorf("API 404: %d %q %v", r.status, r.body, r.header)
	}
	r = b.get("/api/v1/beet/" + beet.NewToken())
	if r.status != 200 || r.header.Get("Content-Type") != "image/gif" {
		t.Errorf("ingestion: %d %s", r.status, r.header.Get("Content-Type"))
	}
	// Static files: content-hashed URLs are cached for long.
	page := b.get("/setup").body
	m := regexp.MustCompile(`/static/app\.css\?v=[0-9a-f]+`).FindString(page)
	if m == "" {
		t.Fatal("no hashed stylesheet URL in the page")
	}
	if r := b.get(m); r.status != 200 || !strings.Contains(r.header.Get("Cache-Control"), "immutable") || !strings.Contains(r.header.Get("Content-Type"), "text/css") {
		t.Errorf("%s: %d %v", m, r.status, r.header)
	}
	// No page refers to anything outside Beet.
	for _, ext := range regexp.MustCompile(`(?:src|href)="(https?:)?//[^"]+"`).FindAllString(page, -1) {
		t.Errorf("external reference %s", ext)
	}
}

func TestCrossOriginFormsRefused(t *testing.T) {
	a := startApp(t, nil)
	b := newBrowser(t, a.URL())
	setup(t, b, "ada@example.com")
	// A form posted from another site, with the victim's cookie.
	r := b.do("POST", "/beets", url.Values{"name": {"evil"}, "timezone": {"UTC"}}, map[string]string{
		"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"})
	if r.status != http.StatusForbidden || !strings.Contains(r.body, "another site") {
		t.Fatalf("cross-site form: %d\n%.400s", r.status, r.body)
	}
	r = b.do("POST", "/logout", url.Values{}, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"})
	want(t, "cross-site sign-out", r, http.StatusForbidden, "")
	if r := b.get("/"); r.status != 200 || strings.Contains(r.body, "evil") {
		t.Fatalf("after refused forms: %d, beet created: %v", r.status, strings.Contains(r.body, "evil"))
	}
	// The same form from Beet's own page works.
	want(t, "same-origin form", b.post("/beets", url.Values{"name": {"Checkout"}, "timezone": {"UTC"}}), http.StatusSeeOther, "/beets/1?created=1")
	// Ingestion takes cross-site POSTs: that is what beacons are.
	token := tokenOf(t, b, 1)
	r = b.do("POST", "/api/v1/beet/"+token, nil, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://shop.example"})
	if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("cross-site ingestion: %d %v", r.status, r.header)
	}
	waitFor(t, "the cross-site event on the beet page", func() bool { return strings.Contains(b.get("/beets/1").body, "<td>POST</td>") })
}

var tokenRE = regexp.MustCompile(`data-copy="http[^"]*/api/v1/beet/(bt_[0-9A-Za-z_-]+)"`)

func tokenOf(t *testing.T, b *browser, id int) string {
	t.Helper()
	m := tokenRE.FindStringSubmatch(b.get("/beets/" + itoa(id)).body)
	if m == nil {
		t.Fatalf("no token on beet %d's page", id)
	}
	return m[1]
}

func itoa(i int) string { return strconv.Itoa(i) }

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
