package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/api"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/sqlstore"
)

// testEnv is a BEET_* environment on a fresh SQLite file.
type testEnv struct {
	t     *testing.T
	dbURL string
	input string
}

func newTestEnv(t *testing.T) *testEnv {
	return &testEnv{t: t, dbURL: "sqlite://" + filepath.Join(t.TempDir(), "beet.db")}
}

func (e *testEnv) getenv(k string) string {
	if k == "BEET_DATABASE_URL" {
		return e.dbURL
	}
	return ""
}

// stdin is what the next run reads; tests of backtest set input.
func (e *testEnv) stdin() io.Reader { return strings.NewReader(e.input) }

// run runs the CLI and returns exit status, stdout and stderr.
func (e *testEnv) run(args ...string) (int, string, string) {
	e.t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, e.getenv, e.stdin(), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// mustRun runs the CLI, fails the test unless it exits 0, and decodes its
// JSON output into v (if v is not nil).
func (e *testEnv) mustRun(v any, args ...string) string {
	e.t.Helper()
	code, out, errOut := e.run(args...)
	if code != 0 {
		e.t.Fatalf("beet %s: exit %d, stderr %q", strings.Join(args, " "), code, errOut)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(out), v); err != nil {
			e.t.Fatalf("beet %s: output %q is not JSON: %v", strings.Join(args, " "), out, err)
		}
	}
	return out
}

// createAccount creates an account, first creating the database (with
// migrate, as only serve and migrate do) when it does not exist yet.
func (e *testEnv) createAccount(email, plan string) int64 {
	e.t.Helper()
	if path, _ := sqliteMissing(e.dbURL); path != "" {
		e.mustRun(nil, "migrate")
	}
	var got struct {
		AccountID int64  `json:"account_id"`
		APIKey    string `json:"api_key"`
	}
	e.mustRun(&got, "accounts", "create", "--email", email, "--password", "correct horse battery staple", "--plan", plan)
	if got.AccountID <= 0 || !beet.ValidAPIKeyShape(got.APIKey) {
		e.t.Fatalf("accounts create printed %+v", got)
	}
	return got.AccountID
}

func oneLineOn(t *testing.T, stderr string) {
	t.Helper()
	if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
		t.Fatalf("want one line on stderr, got %q", stderr)
	}
}

func TestAccountsCreateAndList(t *testing.T) {
	e := newTestEnv(t)
	id := e.createAccount("ada@example.com", "starter")

	var list struct {
		Accounts []struct {
			ID        int64     `json:"id"`
			Plan      string    `json:"plan"`
			Retention string    `json:"retention"`
			Users     []string  `json:"users"`
			CreatedAt time.Time `json:"created_at"`
		} `json:"accounts"`
	}
	e.mustRun(&list, "accounts", "list")
	if len(list.Accounts) != 1 {
		t.Fatalf("accounts list = %+v", list)
	}
	a := list.Accounts[0]
	if a.ID != id || a.Plan != "starter" || a.Retention != "1 year" || a.CreatedAt.IsZero() {
		t.Fatalf("account = %+v", a)
	}
	// Each account lists its users' emails, so the account the setup page
	// made is found by its owner.
	if len(a.Users) != 1 || a.Users[0] != "ada@example.com" {
		t.Fatalf("account users = %q, want [ada@example.com]", a.Users)
	}
}

func TestAccountsCreateDuplicateEmail(t *testing.T) {
	e := newTestEnv(t)
	e.createAccount("ada@example.com", "free")
	code, out, errOut := e.run("accounts", "create", "--email", "ADA@example.com", "--password", "correct horse battery staple")
	if code != 1 || out != "" {
		t.Fatalf("exit %d stdout %q; want 1 and nothing", code, out)
	}
	oneLineOn(t, errOut)
	if !strings.Contains(errOut, "conflict") {
		t.Fatalf("stderr %q does not say conflict", errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	e := newTestEnv(t)
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"accounts"},
		{"accounts", "create", "--password", "x"},    // no email
		{"accounts", "create", "--email", "a@b.c"},   // no password
		{"accounts", "create", "--bogus"},            // unknown flag
		{"accounts", "list", "extra"},                // stray argument
		{"accounts", "set-plan", "--account", "one"}, // not a number
		{"accounts", "set-plan", "--account", "1"},   // no plan
		{"accounts", "set-plan", "--account", "1", "--plan", "gold"},
		{"apikeys", "create"},
		{"apikeys", "revoke"},
		{"cleanup", "--now", "tomorrow"},
		{"migrate", "--cleanup-batch", "0"},
	} {
		code, out, errOut := e.run(args...)
		if code != 2 || out != "" || errOut == "" || len(args) > 0 && strings.Count(errOut, "\n") != 1 { // bare "beet" prints the usage
			t.Errorf("beet %s: exit %d, stdout %q, stderr %q; want 2, nothing, a one-line message",
				strings.Join(args, " "), code, out, errOut)
		}
	}
}

func TestSetPlanBadPlanSaysWhy(t *testing.T) {
	e := newTestEnv(t)
	id := e.createAccount("ada@example.com", "free")
	code, _, errOut := e.run("accounts", "set-plan", "--account", itoa(id), "--plan", "gold")
	if code != 2 || !strings.Contains(errOut, `unknown plan "gold"`) {
		t.Fatalf("exit %d stderr %q", code, errOut)
	}
	code, _, errOut = e.run("accounts", "set-plan", "--account", "999", "--plan", "pro")
	if code != 1 || !strings.Contains(errOut, "not_found") {
		t.Fatalf("unknown account: exit %d stderr %q", code, errOut)
	}
	oneLineOn(t, errOut)

	var got struct {
		AccountID int64  `json:"account_id"`
		Plan      string `json:"plan"`
	}
	e.mustRun(&got, "accounts", "set-plan", "--account", itoa(id), "--plan", "pro")
	if got.AccountID != id || got.Plan != "pro" {
		t.Fatalf("set-plan printed %+v", got)
	}
}

func TestAPIKeys(t *testing.T) {
	e := newTestEnv(t)
	id := e.createAccount("ada@example.com", "free")
	var k struct {
		ID        int64  `json:"id"`
		AccountID int64  `json:"account_id"`
		APIKey    string `json:"api_key"`
	}
	e.mustRun(&k, "apikeys", "create", "--account", itoa(id), "--name", "ci")
	if k.ID <= 0 || k.AccountID != id || !beet.ValidAPIKeyShape(k.APIKey) {
		t.Fatalf("apikeys create printed %+v", k)
	}
	e.mustRun(nil, "apikeys", "revoke", "--id", itoa(k.ID))

	// --read-only makes a key the API refuses to write with; the default writes.
	var ro, rw struct {
		APIKey   string `json:"api_key"`
		ReadOnly bool   `json:"read_only"`
	}
	e.mustRun(&ro, "apikeys", "create", "--account", itoa(id), "--name", "grafana", "--read-only")
	e.mustRun(&rw, "apikeys", "create", "--account", itoa(id))
	if !ro.ReadOnly || rw.ReadOnly {
		t.Fatalf("apikeys create printed read_only %v with --read-only, %v without", ro.ReadOnly, rw.ReadOnly)
	}
	db, err := sqlstore.Open(context.Background(), e.dbURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mux := http.NewServeMux()
	api.New(service.New(db, service.Options{}), nil).Register(mux)
	for key, want := range map[string]int{ro.APIKey: http.StatusForbidden, rw.APIKey: http.StatusCreated} {
		req := httptest.NewRequest("POST", "/api/v1/beets", strings.NewReader(`{"name": "x"}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("POST /api/v1/beets with %s: %d %s, want %d", beet.Redact(key), rec.Code, rec.Body.Bytes(), want)
		}
	}

	code, _, errOut := e.run("apikeys", "revoke", "--id", "999")
	if code != 1 {
		t.Fatalf("revoke unknown key: exit %d", code)
	}
	oneLineOn(t, errOut)
}

func TestMigrateAndVersion(t *testing.T) {
	e := newTestEnv(t)
	var m map[string]string
	e.mustRun(&m, "migrate")
	if m["engine"] != "sqlite" || m["schema"] != "current" {
		t.Fatalf("migrate printed %v", m)
	}
	e.mustRun(&m, "migrate") // twice is harmless
	if out := e.mustRun(nil, "version"); !strings.HasPrefix(out, "beet ") {
		t.Fatalf("version printed %q", out)
	}
}

func TestCleanupFollowsPlans(t *testing.T) {
	e := newTestEnv(t)
	free := e.createAccount("free@example.com", "free")
	starter := e.createAccount("starter@example.com", "starter")
	pro := e.createAccount("pro@example.com", "pro")

	// The events are 400 days old, so every --now below is in the past: a
	// clean-up as of a later time than the present is refused.
	now := time.Now().UTC().AddDate(0, 0, -400)
	beets := map[int64]int64{} // account → beet
	func() {
		ctx := context.Background()
		db, err := sqlstore.Open(ctx, e.dbURL, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var events []beet.Event
		for _, acc := range []int64{free, starter, pro} {
			b := &beet.Beet{AccountID: acc, Name: "nightly", Token: beet.NewToken(), Status: beet.StatusNew,
				Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}}
			if err := db.CreateBeet(ctx, b); err != nil {
				t.Fatal(err)
			}
			beets[acc] = b.ID
			for i := range 3 {
				var id beet.EventID
				rand.Read(id[:])
				events = append(events, beet.Event{ID: id, BeetID: b.ID, Method: "GET",
					ReceivedAt: now.Add(-time.Duration(i) * time.Minute)})
			}
		}
		if err := db.AddEvents(ctx, events, nil); err != nil {
			t.Fatal(err)
		}
	}()

	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	day := 24 * time.Hour

	// A dry run 31 days ahead counts the free account's events only.
	out := e.mustRun(nil, "cleanup", "--now", at(31*day), "--dry-run")
	for _, want := range []string{"free: would delete 3 events received before ", "starter: would delete 0 events", "total: would delete 3 events"} {
		if !strings.Contains(out, want) {
			t.Fatalf("dry run output lacks %q:\n%s", want, out)
		}
	}
	// ... and deletes nothing.
	out = e.mustRun(nil, "cleanup", "--now", at(31*day))
	if !strings.Contains(out, "free: deleted 3 events") || !strings.Contains(out, "total: deleted 3 events") {
		t.Fatalf("31 days ahead:\n%s", out)
	}

	// 367 days ahead: the starter's year is over, the pro's three are not.
	var rep struct {
		DryRun bool `json:"dry_run"`
		Plans  []struct {
			Plan    string `json:"plan"`
			Deleted int64  `json:"deleted"`
		} `json:"plans"`
	}
	e.mustRun(&rep, "cleanup", "--now", at(367*day), "--json")
	deleted := map[string]int64{}
	for _, p := range rep.Plans {
		deleted[p.Plan] = p.Deleted
	}
	if deleted["free"] != 0 || deleted["starter"] != 3 || deleted["pro"] != 0 || rep.DryRun {
		t.Fatalf("367 days ahead deleted %v", deleted)
	}

	// What is left: nothing of free and starter, all of pro.
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, e.dbURL, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for acc, want := range map[int64]int{free: 0, starter: 0, pro: 3} {
		evs, err := db.FindEvents(ctx, beet.EventFilter{BeetID: beets[acc], Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != want {
			t.Errorf("account %d keeps %d events, want %d", acc, len(evs), want)
		}
	}
}

func TestCleanupDowngradeTakesEffectNextPass(t *testing.T) {
	e := newTestEnv(t)
	id := e.createAccount("ada@example.com", "pro")
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, e.dbURL, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	b := &beet.Beet{AccountID: id, Name: "n", Token: beet.NewToken(), Status: beet.StatusNew,
		Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}}
	if err := db.CreateBeet(ctx, b); err != nil {
		t.Fatal(err)
	}
	var eid beet.EventID
	rand.Read(eid[:])
	if err := db.AddEvents(ctx, []beet.Event{{ID: eid, BeetID: b.ID, Method: "GET", ReceivedAt: time.Now().UTC().Add(-40 * 24 * time.Hour)}}, nil); err != nil {
		t.Fatal(err)
	}
	db.Close()

	ahead := time.Now().Format(time.RFC3339)
	if out := e.mustRun(nil, "cleanup", "--now", ahead); !strings.Contains(out, "total: deleted 0 events") {
		t.Fatalf("pro plan lost events:\n%s", out)
	}
	e.mustRun(nil, "accounts", "set-plan", "--account", itoa(id), "--plan", "free")
	if out := e.mustRun(nil, "cleanup", "--now", ahead); !strings.Contains(out, "free: deleted 1 event ") {
		t.Fatalf("after downgrade:\n%s", out)
	}
}

// TestCleanupRefusesTheFuture: a pass as of a later time would move the
// plans' retention marks past events still to come; it is refused with a
// reason, and a dry run is not.
func TestCleanupRefusesTheFuture(t *testing.T) {
	e := newTestEnv(t)
	e.createAccount("ada@example.com", "free")
	future := time.Now().Add(48 * time.Hour).Format(time.RFC3339)
	code, _, stderr := e.run("cleanup", "--now", future)
	if code != 1 || !strings.Contains(stderr, "later than now") {
		t.Fatalf("cleanup --now %s: exit %d, %q; want 1 and a reason", future, code, stderr)
	}
	e.mustRun(nil, "cleanup", "--now", future, "--dry-run")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestBacktestTimezone: --timezone is the beet's zone in auto mode too, as a
// live beet has one: a daily job at 01:30 UTC in January is learned as
// running at 02:30 Europe/Berlin, and an unknown zone is a usage error.
func TestBacktestTimezone(t *testing.T) {
	e := newTestEnv(t)
	var in strings.Builder
	for day := 1; day <= 5; day++ {
		fmt.Fprintf(&in, "2026-01-%02dT01:30:00Z\n", day)
	}
	e.input = in.String()
	code, out, errOut := e.run("backtest", "--timezone", "Europe/Berlin")
	if code != 0 || !strings.Contains(out, "at 02:30 Europe/Berlin") {
		t.Fatalf("exit %d, want the run learned at 02:30 Europe/Berlin:\n%s\n%s", code, out, errOut)
	}
	if code, _, errOut := e.run("backtest", "--timezone", "Mars/Base"); code != 2 || !strings.Contains(errOut, "Mars/Base") {
		t.Fatalf("an unknown zone: exit %d, stderr %q", code, errOut)
	}
}

// TestBacktestWatching: --watching adds one line after the flips, the
// beet as the replay left it, in the API's fields: a daily job's learned
// schedule as its cron line, where the flips said only its first words;
// the flips themselves are those printed without it.
func TestBacktestWatching(t *testing.T) {
	e := newTestEnv(t)
	var in strings.Builder
	for day := 5; day <= 18; day++ { // from a Monday: learned as a weekday job first
		fmt.Fprintf(&in, "2026-01-%02dT01:30:00Z\n", day)
	}
	e.input = in.String()
	_, plain, _ := e.run("backtest", "--timezone", "Europe/Berlin", "--until", "2026-01-18T12:00:00Z")
	code, out, errOut := e.run("backtest", "--timezone", "Europe/Berlin", "--watching", "--until", "2026-01-18T12:00:00Z")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || strings.Join(lines[:len(lines)-1], "\n") != strings.TrimSpace(plain) {
		t.Fatalf("exit %d, want the flips then one line:\n%s\nwithout --watching:\n%s\n%s", code, out, plain, errOut)
	}
	var last struct {
		At, Status, Expectation string
		Watching                struct{ Model, Description, Cron, Timezone string }
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.At != "2026-01-18T12:00:00Z" || last.Status != "up" ||
		last.Watching.Model != "schedule" || last.Watching.Cron != "30 2 * * *" || last.Watching.Timezone != "Europe/Berlin" ||
		!strings.Contains(last.Watching.Description, "runs every day at 02:30 Europe/Berlin") || !strings.Contains(last.Expectation, "02:30") {
		t.Fatalf("last line %q: %+v %v", lines[len(lines)-1], last, err)
	}
	if strings.Contains(plain, "every day at 02:30") {
		t.Fatalf("the flips already say the learned days; the test shows nothing:\n%s", plain)
	}
	// Not in auto mode: what it expects, and no watching.
	e.input = "2026-06-01T10:00:00Z\n"
	code, out, _ = e.run("backtest", "--period", "1h", "--watching")
	if lines = strings.Split(strings.TrimSpace(out), "\n"); code != 0 || len(lines) != 2 || !strings.Contains(lines[1], `"watching":null`) ||
		!strings.Contains(lines[1], "at least every 1 h") {
		t.Fatalf("period mode: exit %d:\n%s", code, out)
	}
}

func TestBacktestCommand(t *testing.T) {
	e := newTestEnv(t)
	e.input = "# hourly job\n2026-06-01T10:00:00Z\n2026-06-01T11:00:00Z\n2026-06-01T14:00:00Z\n"
	code, out, errOut := e.run("backtest", "--period", "1h", "--grace", "5m", "--until", "2026-06-01T14:30:00Z")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 {
		t.Fatalf("exit %d, %d lines:\n%s\n%s", code, len(lines), out, errOut)
	}
	var f struct{ At, From, To, Kind, Reason string }
	if err := json.Unmarshal([]byte(lines[1]), &f); err != nil || f.At != "2026-06-01T12:05:00Z" || f.From != "up" || f.To != "down" || f.Reason == "" {
		t.Fatalf("second flip %q: %+v %v", lines[1], f, err)
	}
	e.input = "2026-06-01T10:00:00Z\nnot a time\n"
	if code, _, errOut := e.run("backtest", "--period", "1h"); code != 1 || !strings.Contains(errOut, "line 2") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("bad input: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ := e.run("backtest", "--period", "10s"); code != 2 {
		t.Fatalf("a 10 s period: exit %d, want 2", code)
	}
	if code, _, _ := e.run("backtest", "--cron", "0 25 * * *"); code != 2 {
		t.Fatalf("a bad cron: exit %d, want 2", code)
	}
	// A detection setting refused names the flag, in durations, not the
	// API's field in seconds.
	for _, c := range []struct{ args, want []string }{
		{[]string{"--mode", "period"}, []string{"--period is required in period mode: from 1 min to 365 days, such as --period 1h"}},
		{[]string{"--period", "10s"}, []string{"--period 10s: must be from 1 min to 365 days"}},
		{[]string{"--period", "1h", "--grace", "-5m"}, []string{"--grace -5m0s: must be from 0 to 365 days"}},
		{[]string{"--mode", "cron"}, []string{"--cron is required in cron mode"}},
		{[]string{"--mode", "hourly"}, []string{`--mode "hourly": want auto, period or cron`}},
	} {
		code, _, errOut := e.run(append([]string{"backtest"}, c.args...)...)
		if code != 2 || strings.Contains(errOut, "detection.") || strings.Contains(errOut, "_seconds") || !strings.Contains(errOut, c.want[0]) {
			t.Errorf("backtest %s: exit %d, stderr %q; want 2 and %q", strings.Join(c.args, " "), code, errOut, c.want[0])
		}
	}
	e.input = "2026-06-01T10:00:00Z\n2026-06-01T11:00:00Z\n"
	for _, args := range [][]string{
		{"--mode", "auto", "--period", "1h"}, // the API refuses the same
		{"--mode", "period", "--period", "1h", "--cron", "0 * * * *"},
		{"--cron", "0 * * * *", "--period", "1h"},
		{"--period", "1h", "--until", "2026-06-01T10:30:00Z"}, // before the last event
	} {
		if code, out, errOut := e.run(append([]string{"backtest"}, args...)...); code != 2 || out != "" || strings.Count(errOut, "\n") != 1 {
			t.Errorf("backtest %s: exit %d, stdout %q, stderr %q; want 2 and one line", strings.Join(args, " "), code, out, errOut)
		}
	}
}

// TestConfigCheckAgreesWithServe: every setting serve refuses at start,
// config check refuses too, for the same reason, and serve refuses a
// sqlite URL with a query before it leaves a lock file beside it.
func TestConfigCheckAgreesWithServe(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ env, value, want string }{
		{"BEET_SMTP_URL", "smtp://mail.example.com?from=a@example.com&tls=bogus", "tls must be starttls"},
		{"BEET_SMTP_URL", "smtp://mail.example.com?from=notanemail", "is not an email address"},
		{"BEET_DATABASE_URL", "postgres://beet@db.example.com/beet?sslmode=bogus", "sslmode is invalid"},
		{"BEET_DATABASE_URL", "postgres://", "names no host"},
		{"BEET_DATABASE_URL", "postgres://beet@db.example.com", "names no database"},
		{"BEET_DATABASE_URL", "sqlite://" + filepath.Join(dir, "beet.db") + "?x=1", "query parameters are not supported"},
		{"BEET_REDIS_URL", "redis://127.0.0.1:6379/abc", "invalid database number"},
		{"BEET_REDIS_URL", "redis://127.0.0.1:6379/0?foo=bar", "unexpected option: foo"},
		{"BEET_SPOOL_PATH", dir, "is a directory"},
		{"BEET_SPOOL_PATH", filepath.Join(dir, "missing", "beet.spool"), "does not exist"},
		{"BEET_SPOOL_PATH", filepath.Join(dir, "beet.db"), "is the database file"},
	} {
		getenv := func(k string) string {
			switch k {
			case tc.env:
				return tc.value
			case "BEET_DATABASE_URL":
				return "sqlite://" + filepath.Join(dir, "beet.db")
			case "BEET_LISTEN", "BEET_METRICS_LISTEN":
				return "127.0.0.1:0"
			}
			return ""
		}
		for _, cmd := range [][]string{{"config", "check"}, {"serve"}} {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), cmd, getenv, strings.NewReader(""), &stdout, &stderr)
			out := stdout.String() + stderr.String()
			// config check lists every setting and exits 1; serve refuses
			// like any bad setting: exit 2, one line on stderr.
			want := 1
			if cmd[0] == "serve" {
				want = 2
				if stdout.Len() > 0 || strings.Count(stderr.String(), "\n") != 1 {
					t.Errorf("%s=%s beet serve: want one line on stderr, got %q, %q", tc.env, tc.value, stdout.String(), stderr.String())
				}
			}
			if code != want || !strings.Contains(out, tc.want) || !strings.Contains(out, tc.env) {
				t.Errorf("%s=%s beet %s: exit %d, want %d naming %s: %s\n%s", tc.env, tc.value, strings.Join(cmd, " "), code, want, tc.want, tc.env, out)
			}
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.lock")); len(m) > 0 {
		t.Errorf("serve refused its settings but left %v", m)
	}
}

// TestEmptyDatabaseURLRefused: BEET_DATABASE_URL set to "" (an unset
// ${DB_URL}, an empty Secret key) is refused, not read as the default
// sqlite://beet.db; unset, or given by a flag, it is fine.
func TestEmptyDatabaseURLRefused(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	getenv := func(string) string { return "" }
	for _, tc := range []struct {
		environ []string
		args    []string
		want    int
	}{
		{[]string{"BEET_DATABASE_URL="}, []string{"migrate"}, 2},
		{[]string{"BEET_DATABASE_URL= "}, []string{"config", "check"}, 1},
		{[]string{"BEET_DATABASE_URL="}, []string{"migrate", "--database-url", "sqlite://" + filepath.Join(dir, "flag.db")}, 0},
		{nil, []string{"migrate"}, 0},
	} {
		environ = func() []string { return tc.environ }
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, getenv, strings.NewReader(""), &stdout, &stderr)
		if code != tc.want {
			t.Errorf("%v beet %v: exit %d, want %d\n%s%s", tc.environ, tc.args, code, tc.want, stdout.String(), stderr.String())
		}
		if out := stdout.String() + stderr.String(); tc.want != 0 && (!strings.Contains(out, "is set but empty") || !strings.Contains(out, "BEET_DATABASE_URL")) {
			t.Errorf("%v beet %v does not say why: %s%s", tc.environ, tc.args, stdout.String(), stderr.String())
		}
	}
	environ = os.Environ
	if _, err := os.Stat(filepath.Join(dir, "beet.db")); err != nil {
		t.Errorf("unset, the default file is used: %v", err)
	}
}
