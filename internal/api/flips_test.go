package api_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// TestFlipsPages: a flapping beet's flips are all reachable: a full page
// says in next where the older ones start, and following it reads every
// flip once, those that share an instant included.
func TestFlipsPages(t *testing.T) {
	e := newEnv(t)
	b := e.createBeet(e.keyA, map[string]any{"name": "flapping"})
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 123456000, time.UTC)
	status, n := beet.StatusNew, 25
	for i := range n {
		to := beet.StatusDown
		if status != beet.StatusUp {
			to = beet.StatusUp
		}
		// Three flips an instant: a page may end among them.
		f := &beet.Flip{BeetID: b.ID, At: t0.Add(time.Duration(i/3) * time.Minute), From: status, To: to, Kind: beet.FlipManual, Reason: fmt.Sprint(i)}
		if err := e.store.SetBeetStatus(context.Background(), f); err != nil {
			t.Fatal(err)
		}
		status = to
	}
	path := fmt.Sprintf("/api/v1/beets/%d/flips", b.ID)
	type page struct {
		Flips []beet.FlipJSON
		Next  *struct {
			Until    string `json:"until"`
			BeforeID *int64 `json:"before_id"`
		}
	}
	var reasons []string
	query := "?limit=10"
	for pages := 0; query != ""; pages++ {
		if pages > n {
			t.Fatal("next never ends")
		}
		var p page
		e.do(e.keyA, "GET", path+query, nil).json(t, &p)
		for _, f := range p.Flips {
			reasons = append(reasons, f.Reason)
		}
		query = ""
		if p.Next != nil {
			if p.Next.Until == "" || p.Next.BeforeID == nil {
				t.Fatalf("next %+v", p.Next)
			}
			query = fmt.Sprintf("?limit=10&until=%s&before_id=%d", url.QueryEscape(p.Next.Until), *p.Next.BeforeID)
		}
	}
	if len(reasons) != n {
		t.Fatalf("followed next to %d flips, want %d: %v", len(reasons), n, reasons)
	}
	for i, r := range reasons {
		if want := fmt.Sprint(n - 1 - i); r != want {
			t.Fatalf("flip %d is %s, want %s (newest first, each once): %v", i, r, want, reasons)
		}
	}
	for q, field := range map[string]string{"before_id=3": "before_id", "until=2026-05-01T12:00:00Z&before_id=x": "before_id",
		"until=soon": "until", "limit=1001": "limit"} {
		r := e.do(e.keyA, "GET", path+"?"+q, nil)
		if code, f := r.errorCode(t); r.status != 422 || code != "validation_failed" || f != field {
			t.Errorf("?%s: %d %s", q, r.status, r.body)
		}
	}
}
