package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/sqlstore"
)

// BenchmarkCountEventBuckets measures the dashboard's chart query: one
// beet holding 200,000 events in the last 24 hours (about 2.3 a second),
// counted into 96 buckets of 15 minutes.
func BenchmarkCountEventBuckets(b *testing.B) {
	benchEngines(b, func(b *testing.B, db *sqlstore.DB, bt *beet.Beet) {
		ctx := context.Background()
		now := time.Now().UTC()
		start := now.Add(-24 * time.Hour)
		const n = 200_000
		for i := 0; i < n; i += 10_000 {
			ev := benchEvents(bt.ID, start.Add(time.Duration(i)*432*time.Millisecond), 10_000)
			for j := range ev {
				ev[j].ReceivedAt = start.Add(time.Duration(i+j) * 432 * time.Millisecond)
			}
			if err := db.AddEvents(ctx, ev, nil); err != nil {
				b.Fatal(err)
			}
		}
		bk := beet.Buckets{From: start, Step: 15 * time.Minute, N: 96}
		b.ResetTimer()
		for b.Loop() {
			got, err := db.CountEventBuckets(ctx, []int64{bt.ID}, bk)
			if err != nil {
				b.Fatal(err)
			}
			if len(got[bt.ID]) != 96 {
				b.Fatalf("%d buckets", len(got[bt.ID]))
			}
		}
		b.ReportMetric(float64(n), "events")
	})
}

// BenchmarkSparklines measures the beet list's query: a page of 100 beets,
// each with 2,000 events in the last 24 hours, counted per hour. Measured
// here: 32 ms on SQLite, 63 ms on PostgreSQL.
func BenchmarkSparklines(b *testing.B) {
	benchEngines(b, func(b *testing.B, db *sqlstore.DB, bt *beet.Beet) {
		ctx := context.Background()
		now := time.Now().UTC()
		start := now.Add(-24 * time.Hour)
		ids := []int64{bt.ID}
		for len(ids) < 100 {
			nb := &beet.Beet{AccountID: bt.AccountID, Name: "bench", Token: beet.NewToken(), Status: beet.StatusUp,
				Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}}
			if err := db.CreateBeet(ctx, nb); err != nil {
				b.Fatal(err)
			}
			ids = append(ids, nb.ID)
		}
		for _, id := range ids {
			ev := benchEvents(id, start, 2000)
			for j := range ev {
				ev[j].ReceivedAt = start.Add(time.Duration(j) * 43 * time.Second)
			}
			if err := db.AddEvents(ctx, ev, nil); err != nil {
				b.Fatal(err)
			}
		}
		bk := beet.Buckets{From: start, Step: time.Hour, N: 24}
		b.ResetTimer()
		for b.Loop() {
			got, err := db.CountEventBuckets(ctx, ids, bk)
			if err != nil || len(got) != 100 {
				b.Fatalf("%d beets, %v", len(got), err)
			}
		}
	})
}
