package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// TestSignalEventsInTheAPI: events carry their kind, exit code, message
// and the run's duration_ms; the beet shows an open run; the detection's
// max_runtime_seconds is taken in every mode and checked.
func TestSignalEventsInTheAPI(t *testing.T) {
	e := newEnv(t)
	b := e.createBeet(e.keyA, map[string]any{"name": "backup", "detection": map[string]any{"mode": "auto", "max_runtime_seconds": 3600}})
	at := time.Date(2026, 5, 1, 2, 0, 0, 0, time.UTC)
	code := 2
	evs := []beet.Event{
		{ID: beet.EventID{1}, BeetID: b.ID, ReceivedAt: at, Method: "GET", Kind: beet.KindStart},
		{ID: beet.EventID{2}, BeetID: b.ID, ReceivedAt: at.Add(90 * time.Second), Method: "POST", Kind: beet.KindFail, ExitCode: &code, Message: "disk full"},
		{ID: beet.EventID{3}, BeetID: b.ID, ReceivedAt: at.Add(100 * time.Second), Method: "GET", Kind: beet.KindStart},
	}
	if err := e.store.AddEvents(context.Background(), evs, nil); err != nil {
		t.Fatal(err)
	}
	var out struct{ Events []map[string]any }
	e.do(e.keyA, "GET", fmt.Sprintf("/api/v1/beets/%d/events", b.ID), nil).json(t, &out)
	if len(out.Events) != 3 {
		t.Fatalf("events: %+v", out)
	}
	fail, start := out.Events[1], out.Events[2]
	if fail["kind"] != "fail" || fail["exit_code"] != 2.0 || fail["duration_ms"] != 90000.0 || fail["message"] != "disk full" {
		t.Errorf("failure event: %v", fail)
	}
	if start["kind"] != "start" || start["exit_code"] != nil || start["duration_ms"] != nil || start["message"] != nil {
		t.Errorf("start event: %v", start)
	}
	var got map[string]any
	e.do(e.keyA, "GET", fmt.Sprintf("/api/v1/beets/%d", b.ID), nil).json(t, &got)
	if got["running_since"] != at.Add(100*time.Second).Format(time.RFC3339) {
		t.Errorf("running_since = %v", got["running_since"])
	}
	if det, _ := json.Marshal(got["detection"]); string(det) != `{"max_runtime_seconds":3600,"mode":"auto"}` {
		t.Errorf("detection = %s", det)
	}
	if exp, _ := got["expectation"].(string); !strings.Contains(exp, "A run still going after 1 h turns the beet down.") {
		t.Errorf("expectation %q does not say how runs are watched", exp)
	}
	r := e.do(e.keyA, "PATCH", fmt.Sprintf("/api/v1/beets/%d", b.ID), map[string]any{"detection": map[string]any{"mode": "period", "period_seconds": 3600, "max_runtime_seconds": -1}})
	if code, field := r.errorCode(t); r.status != 422 || code != "validation_failed" || field != "detection.max_runtime_seconds" {
		t.Errorf("negative max_runtime_seconds: %d %s", r.status, r.body)
	}
}

// TestRotatedTokensAreListed: a rotation's old token is listed with its
// hits, as a prefix only, and only to the beet's account.
func TestRotatedTokensAreListed(t *testing.T) {
	e := newEnv(t)
	b := e.createBeet(e.keyA, map[string]any{"name": "cron"})
	var rot struct{ Token string }
	e.do(e.keyA, "POST", fmt.Sprintf("/api/v1/beets/%d/rotate-token", b.ID), nil).json(t, &rot)
	err := e.store.AddRotatedTokenHits(context.Background(), []beet.RotatedTokenHit{
		{Hash: beet.TokenHash(b.Token), Count: 14, At: time.Now(), Addr: "10.0.0.7", UserAgent: "curl/8"}})
	if err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("/api/v1/beets/%d/rotated-tokens", b.ID)
	r := e.do(e.keyA, "GET", path, nil)
	var out struct {
		RotatedTokens []struct {
			Prefix   string
			Hits     int64
			LastAddr string `json:"last_addr"`
		} `json:"rotated_tokens"`
	}
	r.json(t, &out)
	if len(out.RotatedTokens) != 1 || out.RotatedTokens[0].Hits != 14 || out.RotatedTokens[0].LastAddr != "10.0.0.7" ||
		out.RotatedTokens[0].Prefix != beet.Redact(b.Token) || strings.Contains(string(r.body), b.Token) {
		t.Fatalf("rotated tokens: %s", r.body)
	}
	if r := e.do(e.keyB, "GET", path, nil); r.status != 404 {
		t.Errorf("another account reads the old tokens: %d", r.status)
	}
}
