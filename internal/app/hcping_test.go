package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testlog"
)

// TestHealthchecksPingPath: through the whole service, a beet imported
// with a Healthchecks check's UUID records {base}/ping/{uuid} and its
// signals, every answer says Ping-Body-Limit, and no log line holds the
// UUID (the token) whole.
func TestHealthchecksPingPath(t *testing.T) {
	ctx := context.Background()
	logs := &testlog.Buffer{}
	a := startApp(t, testConfig(t), app.Options{Log: testlog.New(logs)})
	svc := a.Backend().Service
	acct, _, err := svc.CreateAccount(ctx, "hc@example.com", "password1", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	const uuid = "31365bce-8da9-4729-8ff3-aaa71d56b712"
	b, err := svc.ImportBeet(ctx, acct.ID, service.ImportInput{
		BeetInput: service.BeetInput{Name: "Backups", Detection: &beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600, GraceSeconds: 600}},
		Token:     uuid, SourceKey: "healthchecks:test",
	})
	if err != nil {
		t.Fatal(err)
	}
	send := func(method, path, body string) {
		t.Helper()
		req, _ := http.NewRequest(method, a.URL()+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "text/plain")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "image/gif" || res.Header.Get("Ping-Body-Limit") != "10000" {
			t.Errorf("%s %s: %d %q, Ping-Body-Limit %q", method, path, res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Ping-Body-Limit"))
		}
	}
	send("POST", "/ping/"+uuid+"/start?rid=0f8fad5b-d9cb-469f-a165-70867728950e", "")
	send("POST", "/ping/"+uuid+"?rid=0f8fad5b-d9cb-469f-a165-70867728950e", "all good")
	send("GET", "/ping/"+uuid+"/1", "")
	send("GET", "/ping/not-a-token", "")
	evs, err := svc.Events(ctx, acct.ID, beet.EventFilter{BeetID: b.ID, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 || evs[1].Message != "all good" || evs[1].Duration == nil || evs[0].Kind != beet.KindFail {
		t.Fatalf("events %+v; want the start, the success with its output and duration, the failure", evs)
	}
	a.Stop(ctx)
	if strings.Contains(logs.String(), uuid) || strings.Contains(logs.String(), "0f8fad5b-d9cb") {
		t.Errorf("a log line holds the token or run ID whole:\n%s", logs.String())
	}
}
