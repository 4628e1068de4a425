package statuspage_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/statuspage"
	"github.com/beethq/beet/internal/testdb"
)

// BenchmarkStatusPage1000 measures a page of 1,000 beets in 10 tags, each
// with 4 flips in its 90 days, on SQLite (and PostgreSQL when
// BEET_TEST_POSTGRES_URL is set):
//
//   - build: the report from the store (what one instance does once per
//     TTL per page), with the HTML render;
//   - cached: an answer from the cached report (every other request);
//   - revalidated: a 304 to a reader that sends the ETag back.
//
// go test ./internal/statuspage -run '^$' -bench StatusPage1000 -benchtime 20x
func BenchmarkStatusPage1000(b *testing.B) {
	for _, engine := range testdb.Engines {
		b.Run(engine, func(b *testing.B) { benchStatusPage(b, engine) })
	}
}

func benchStatusPage(b *testing.B, engine string) {
	ctx := context.Background()
	db := testdb.New(b, engine)
	now := time.Date(2026, 11, 20, 14, 30, 0, 0, time.UTC)
	c := &clock{t: now.AddDate(0, 0, -100)}
	svc := service.New(db, service.Options{Now: c.now, PasswordParams: cheapHash})
	a, _, err := svc.CreateAccount(ctx, "a@example.com", "password-a", beet.PlanPro)
	if err != nil {
		b.Fatal(err)
	}
	tags := make([]string, 10)
	for i := range tags {
		tags[i] = fmt.Sprintf("team-%d", i)
	}
	for i := range 1000 {
		bt, err := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: fmt.Sprintf("job %04d", i)})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := svc.SetBeetTags(ctx, a.ID, bt.ID, tags[i%10]); err != nil {
			b.Fatal(err)
		}
		at := now.AddDate(0, 0, -95)
		for j, to := range []beet.Status{beet.StatusUp, beet.StatusDown, beet.StatusUp, beet.StatusAnomalous, beet.StatusUp} {
			from := beet.StatusNew
			if j > 0 {
				from = []beet.Status{beet.StatusUp, beet.StatusDown, beet.StatusUp, beet.StatusAnomalous}[j-1]
			}
			if err := db.SetBeetStatus(ctx, &beet.Flip{BeetID: bt.ID, At: at, From: from, To: to, Kind: beet.FlipManual, Reason: "x"}); err != nil {
				b.Fatal(err)
			}
			at = at.Add(time.Duration(i%17+1) * 97 * time.Hour / 5)
		}
	}
	c.set(now)
	if err := svc.CreateStatusPage(ctx, a.ID, &beet.StatusPage{Slug: "big", Title: "Big", Tags: tags}); err != nil {
		b.Fatal(err)
	}
	h, err := statuspage.New(svc, nil, "https://status.example.test")
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	serve := func(etag string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/status/big", nil)
		req.Header.Set("Accept-Encoding", "gzip, deflate, br") // as browsers send
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}
	first := serve("")
	if first.Code != 200 {
		b.Fatalf("%d %s", first.Code, first.Body)
	}
	gzSize := first.Body.Len()
	plain := httptest.NewRecorder()
	mux.ServeHTTP(plain, httptest.NewRequest("GET", "/status/big", nil))
	size := plain.Body.Len()

	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			c.set(c.now().Add(service.ReportTTL)) // the cached report is stale: build anew
			if rec := serve(""); rec.Code != 200 {
				b.Fatal(rec.Code)
			}
		}
		b.ReportMetric(float64(size), "html-bytes")
		b.ReportMetric(float64(gzSize), "gzip-bytes")
	})
	b.Run("cached", func(b *testing.B) {
		serve("")
		for b.Loop() {
			if rec := serve(""); rec.Code != 200 {
				b.Fatal(rec.Code)
			}
		}
	})
	b.Run("revalidated", func(b *testing.B) {
		etag := serve("").Header().Get("ETag")
		for b.Loop() {
			if rec := serve(etag); rec.Code != http.StatusNotModified {
				b.Fatal(rec.Code)
			}
		}
	})
}
