package ingest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/ingest"
	"github.com/beethq/beet/internal/testdb"
)

// TestSignalPaths: /start, /fail, /log and /{exit code} answer the GIF to
// GET and POST and record an event of their kind; a start followed by an
// end puts the run's length on the end.
func TestSignalPaths(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		r := newRig(t, engine, nil)
		cases := []struct {
			suffix string
			kind   beet.EventKind
			code   int // -1: none
		}{
			{"/start", beet.KindStart, -1},
			{"/fail", beet.KindFail, -1},
			{"/log", beet.KindLog, -1},
			{"/0", beet.KindPing, 0},
			{"/2", beet.KindFail, 2},
			{"/255", beet.KindFail, 255},
			{"/TERM", beet.KindFail, 143}, // systemd's ${EXIT_STATUS} of a killed service
			{"/SIGKILL", beet.KindFail, 137},
			{"", beet.KindPing, -1},
		}
		for _, method := range []string{"GET", "POST"} {
			for _, tc := range cases {
				b := r.newBeet(false)
				r.clock.Advance(time.Second)
				res := r.send(method, ingest.Prefix+b.Token+tc.suffix, "", "", "curl/8")
				expectGIF(t, method+" "+tc.suffix, res, 200)
				evs := r.events(b)
				if len(evs) != 1 || evs[0].Kind != tc.kind || evs[0].Method != method {
					t.Fatalf("%s %s recorded %+v; want one %s event", method, tc.suffix, evs, tc.kind)
				}
				if got := evs[0].ExitCode; tc.code < 0 && got != nil || tc.code >= 0 && (got == nil || *got != tc.code) {
					t.Errorf("%s %s: exit code %v, want %d", method, tc.suffix, got, tc.code)
				}
			}
		}
		// A run: start, then /0 three and a half seconds later.
		b := r.newBeet(false)
		r.send("GET", ingest.Prefix+b.Token+"/start", "", "", "curl/8")
		r.clock.Advance(3500 * time.Millisecond)
		r.send("GET", ingest.Prefix+b.Token+"/0", "", "", "curl/8")
		evs := r.events(b)
		if len(evs) != 2 || evs[0].Duration == nil || *evs[0].Duration != 3500*time.Millisecond || evs[1].Duration != nil {
			t.Fatalf("run events %+v; want the end to carry 3.5 s", evs)
		}
	})
}

// TestSignalBodies: a signal's POST body text is its message; a JSON
// object gives a value (and its "message"); a body over the limit is kept
// cut to it as the message; text is never a problem.
func TestSignalBodies(t *testing.T) {
	r := newRig(t, "sqlite", nil)
	b := r.newBeet(false)
	post := func(suffix, contentType, body string) *beet.Event {
		t.Helper()
		r.clock.Advance(time.Second)
		expectGIF(t, suffix, r.send("POST", ingest.Prefix+b.Token+suffix, contentType, body, "curl/8"), 200)
		return r.events(b)[0]
	}
	if e := post("/log", "text/plain", "  backup: 3 files skipped\nsee /var/log/backup  "); e.Kind != beet.KindLog || e.Message != "backup: 3 files skipped\nsee /var/log/backup" {
		t.Errorf("/log text: %+v", e)
	}
	if e := post("/fail", "application/json", `{"value": 3, "message": "exit 3: disk full"}`); e.Value == nil || *e.Value != 3 || e.Message != "exit 3: disk full" {
		t.Errorf("/fail JSON: value %v, message %q", e.Value, e.Message)
	}
	if e := post("/log", "", "bad \x00 bytes \xff"); e.Message != "bad  bytes \uFFFD" {
		t.Errorf("NUL and invalid UTF-8: message %q", e.Message)
	}
	if e := post("/log", "", strings.Repeat("x", ingest.MaxBody)+"tail"); e.Message != strings.Repeat("x", ingest.MaxBody) || e.Kind != beet.KindLog {
		t.Errorf("oversized body: %d bytes of message, want it cut to %d", len(e.Message), ingest.MaxBody)
	}
	if e := post("", "text/plain", "plain ping's output"); e.Message != "plain ping's output" || e.Kind.Normal() != beet.KindPing {
		t.Errorf("plain ping text: %+v", e)
	}
	if ps := r.problems(b, 1); len(ps) != 0 {
		t.Errorf("problems %+v; want none (text bodies are messages, a long one is cut)", ps)
	}
	if e := post("/log", "", strings.Repeat("é", ingest.MaxBody/2)); len(e.Message) != ingest.MaxBody {
		t.Errorf("a body at the limit keeps %d bytes of message, want all %d", len(e.Message), ingest.MaxBody)
	}
}

// TestSignalPathsRefused: an unknown path after a token records nothing,
// answers the GIF and is noted on the beet; HEAD and OPTIONS on a signal
// record nothing; signals share the token's rate limit.
func TestSignalPathsRefused(t *testing.T) {
	r := newRig(t, "sqlite", nil)
	b := r.newBeet(false)
	for _, suffix := range []string{"/stat", "/256", "/-1", "/1234", "/start/now", "/start/", "/0x1", "/term", "/SIGNAL", "/T"} {
		expectGIF(t, suffix, r.send("GET", ingest.Prefix+b.Token+suffix, "", "", "curl/8"), 200)
	}
	r.send("HEAD", ingest.Prefix+b.Token+"/start", "", "", "curl/8")
	if res := r.send("OPTIONS", ingest.Prefix+b.Token+"/fail", "", "", "curl/8"); res.status != 204 {
		t.Errorf("OPTIONS /fail: %d", res.status)
	}
	if evs := r.events(b); len(evs) != 0 {
		t.Fatalf("refused paths recorded %+v", evs)
	}
	ps := r.problems(b, 1)
	if len(ps) != 1 || ps[0].Kind != beet.ProblemBadPath || !strings.Contains(ps[0].Detail, "/stat") {
		t.Errorf("problems %+v; want one bad_path naming /stat", ps)
	}
	r.clock.Advance(11 * time.Second) // the refused requests above used the window too
	for i := range 60 {
		suffix := []string{"/start", "/log", "", "/0"}[i%4]
		if res := r.send("GET", ingest.Prefix+b.Token+suffix, "", "", "curl/8"); res.status != 200 {
			t.Fatalf("request %d: %d", i+1, res.status)
		}
	}
	expectGIF(t, "61st", r.send("GET", ingest.Prefix+b.Token+"/fail", "", "", "curl/8"), 429)
	if n := len(r.events(b)); n != 60 {
		t.Errorf("%d events, want 60", n)
	}
}

// TestRotatedTokenHits: requests with a beet's old token record nothing,
// on either engine, and are counted on the beet's old token with the last
// client's address (X-Forwarded-For is not believed from an untrusted peer).
func TestRotatedTokenHits(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		r := newRig(t, engine, nil)
		b := r.newBeet(false)
		old := b.Token
		// Used before the rotation, so the token cache still holds it after:
		// the store drops those events, and they are counted all the same.
		r.send("GET", ingest.Prefix+old, "", "", "curl/8")
		if _, err := r.svc.RotateToken(context.Background(), r.acct, b.ID); err != nil {
			t.Fatal(err)
		}
		for i := range 14 {
			r.clock.Advance(time.Second)
			suffix := []string{"", "/start", "/0", "/log"}[i%4]
			req := r.send("POST", ingest.Prefix+old+suffix, "text/plain", "hello", "backup.sh")
			expectGIF(t, "old token", req, 200)
		}
		deadline := time.Now().Add(5 * time.Second)
		var rts []*beet.RotatedToken
		for time.Now().Before(deadline) {
			var err error
			if rts, err = r.store.FindRotatedTokens(context.Background(), b.ID, r.clock.Now().Add(-beet.RotatedTokenGrace)); err != nil {
				t.Fatal(err)
			}
			if len(rts) == 1 && rts[0].Hits == 14 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if len(rts) != 1 || rts[0].Hits != 14 || rts[0].LastAddr != "127.0.0.1" || rts[0].LastUserAgent != "backup.sh" ||
			rts[0].Prefix != beet.Redact(old) {
			t.Fatalf("old token after 14 hits: %+v", rts)
		}
		if evs := r.events(b); len(evs) != 1 {
			t.Fatalf("an old token recorded %d events after its rotation", len(evs)-1)
		}
		if st := r.h.UnknownStats(); st.Rotated.Load() != 14 || st.Unknown.Load() != 0 {
			t.Errorf("stats: rotated %d, unknown %d; want 14 and 0", st.Rotated.Load(), st.Unknown.Load())
		}
		// It is listed among the recent ones as the beet's old token, so
		// the dashboard can name the beet (to its account).
		if us := r.h.UnknownTokens(); len(us) != 1 || us[0].BeetID != b.ID || !us[0].Rotated || us[0].Count != 14 || us[0].Prefix != beet.Redact(old) {
			t.Errorf("the old token among the recent ones: %+v", us)
		}
	})
}

// TestUnknownTokens: malformed and unknown tokens are listed by shape and
// prefix with a count, never whole, in bounded memory.
func TestUnknownTokens(t *testing.T) {
	r := newRig(t, "sqlite", nil)
	b := r.newBeet(false)
	// One character swapped for another from the alphabet: a typo, not garbage.
	typo := byte('7')
	if b.Token[10] == typo {
		typo = '8'
	}
	mistyped := b.Token[:10] + string(typo) + b.Token[11:]
	unknown := beet.NewToken()
	sent := map[string]int{
		mistyped:            3,
		unknown:             2,
		b.Token[:20]:        1,
		"bk_" + b.Token[3:]: 1,
		"hello":             1,
		"bt_" + strings.Repeat("!", beet.TokenLen-3): 1,
	}
	for tok, n := range sent {
		for range n {
			expectGIF(t, "unknown", r.send("GET", ingest.Prefix+tok+"/start", "", "", "curl/8 (cron)"), 200)
		}
	}
	// Well-formed unknown tokens are checked against rotated ones off the
	// request path: wait until every request is listed.
	total := 0
	for _, n := range sent {
		total += n
	}
	var got []beet.UnknownToken
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		listed := 0
		got = r.h.UnknownTokens()
		for _, u := range got {
			listed += int(u.Count)
		}
		if len(got) == len(sent) && listed == total {
			break
		}
	}
	shapes := map[string]beet.UnknownToken{}
	for _, u := range got {
		shapes[u.Shape] = u
		for tok := range sent {
			if len(tok) > 8 && strings.Contains(u.Prefix, tok) || strings.Contains(u.Prefix, tok[min(len(tok), beet.RedactedLen):]) && len(tok) > 2*beet.RedactedLen {
				t.Errorf("listing %+v holds a whole token or its secret part", u)
			}
		}
		if u.Addr != "127.0.0.1" || u.UserAgent != "curl/8 (cron)" || u.Count < 1 {
			t.Errorf("listing %+v: want address, user agent and count", u)
		}
	}
	want := map[string]int64{
		"checksum does not match (mistyped or made up)": 3,
		"no beet has it":                        2,
		"wrong length (20 characters, want 31)": 1,
		"an API key, not an ingestion token":    1,
		"no bt_ prefix":                         1,
		"characters outside the token alphabet": 1,
	}
	for shape, n := range want {
		if u, ok := shapes[shape]; !ok || u.Count != n {
			t.Errorf("shape %q: %+v; want count %d (all: %+v)", shape, u, n, got)
		}
	}
	if evs := r.events(b); len(evs) != 0 {
		t.Errorf("unknown tokens recorded %d events", len(evs))
	}
	// UnknownTokensNear hands the caller's matcher the malformed tokens
	// that may be typos (about the right length, the prefix), never a
	// well-formed one; the listing names the beet the matcher found.
	var asked []string
	near := func(sent string) int64 {
		asked = append(asked, sent)
		if sent == mistyped {
			return b.ID
		}
		return 0
	}
	for _, u := range r.h.UnknownTokensNear(near) {
		if (u.BeetID == b.ID) != (u.Shape == "checksum does not match (mistyped or made up)") || u.Rotated {
			t.Errorf("listing %+v: want the mistyped one, alone, meant for beet %d", u, b.ID)
		}
	}
	if !slices.Contains(asked, mistyped) || slices.Contains(asked, unknown) || slices.Contains(asked, b.Token[:20]) || slices.Contains(asked, "hello") {
		t.Errorf("the matcher was asked about %q; want the mistyped token, not the well-formed unknown one or those far in length", asked)
	}
	// Bounded: a flood of distinct garbage keeps a few hundred entries.
	for i := range 1000 {
		r.send("GET", ingest.Prefix+fmt.Sprintf("x%05d", i), "", "", "flood")
	}
	if n := len(r.h.UnknownTokens()); n > 200 {
		t.Errorf("%d unknown tokens kept after a flood; want at most 200", n)
	}
	if st := r.h.UnknownStats(); st.Malformed.Load() < 1000 || st.Unknown.Load() != 2 {
		t.Errorf("stats: malformed %d, unknown %d", st.Malformed.Load(), st.Unknown.Load())
	}
}
