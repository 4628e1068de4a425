package app_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/testdb"
)

// TestTwoInstancesRefuseRotatedToken runs two instances over one
// PostgreSQL database, as a scaled-out install does. Both have just
// recorded the beet's token (so anything they keep in memory about it is
// warm) when it is rotated through one of them: from then on both refuse
// the old token and take the new one, and once the beet is deleted both
// record nothing for it.
func TestTwoInstancesRefuseRotatedToken(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	cfg.DatabaseURL = testdb.URL(t, "postgres")
	opts := app.Options{Log: slog.New(slog.DiscardHandler)}
	cfg.SpoolPath = t.TempDir() + "/a.spool"
	a := startApp(t, cfg, opts)
	cfg.SpoolPath = t.TempDir() + "/b.spool"
	b := startApp(t, cfg, opts)

	_, key, err := a.Backend().Service.CreateAccount(ctx, "two@example.com", "password1", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	status, body := apiCall(t, a.URL(), key, "POST", "/api/v1/beets", `{"name": "Nightly export"}`)
	var bt struct {
		ID    int64
		Token string
	}
	json.Unmarshal(body, &bt)
	if status != 201 {
		t.Fatalf("create beet: %d %s", status, body)
	}
	ping := func(inst *app.App, token string) {
		t.Helper()
		res, err := http.Get(inst.URL() + "/api/v1/beet/" + token)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("ingest answered %d", res.StatusCode)
		}
	}
	events := func() int {
		t.Helper()
		status, body := apiCall(t, b.URL(), key, "GET", "/api/v1/beets/"+itoa(bt.ID)+"/events", "")
		if status != 200 {
			t.Fatalf("events: %d %s", status, body)
		}
		return strings.Count(string(body), `"received_at"`)
	}

	for range 2 {
		ping(a, bt.Token)
		ping(b, bt.Token)
	}
	if n := events(); n != 4 {
		t.Fatalf("%d events after 4 pings over two instances", n)
	}

	status, body = apiCall(t, a.URL(), key, "POST", "/api/v1/beets/"+itoa(bt.ID)+"/rotate-token", "")
	var rotated struct{ Token string }
	json.Unmarshal(body, &rotated)
	if status != 200 || rotated.Token == "" {
		t.Fatalf("rotate: %d %s", status, body)
	}
	ping(a, bt.Token)
	ping(b, bt.Token)
	if n := events(); n != 4 {
		t.Fatalf("the rotated token recorded %d events on the two instances, want none", n-4)
	}
	ping(b, rotated.Token)
	ping(a, rotated.Token)
	if n := events(); n != 6 {
		t.Fatalf("the new token recorded %d events on the two instances, want 2", n-4)
	}

	if status, body := apiCall(t, a.URL(), key, "DELETE", "/api/v1/beets/"+itoa(bt.ID), ""); status/100 != 2 {
		t.Fatalf("delete: %d %s", status, body)
	}
	ping(b, rotated.Token)
	ping(a, rotated.Token)
	// Neither commit failed over the gone beet (which would park its
	// group in the spool): the event was dropped inside the commit.
	for _, inst := range []*app.App{a, b} {
		res, err := http.Get(inst.AdminURL() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		m, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(m), "beet_ingest_events_spooled_total 0") {
			t.Fatalf("an instance spooled events:\n%s", grep(string(m), "beet_ingest"))
		}
	}
	status, _ = apiCall(t, b.URL(), key, "GET", "/api/v1/beets/"+itoa(bt.ID)+"/events", "")
	if status != 404 {
		t.Fatalf("the deleted beet's events answered %d, want 404", status)
	}
}
