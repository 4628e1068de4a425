package sqlstore_test

import (
	"context"
	"encoding/binary"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/sqlstore"
)

// Run with, for example:
//
//	BEET_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable \
//	  go test -run '^$' -bench . -benchtime 2s -count 3 ./internal/sqlstore/

var benchSeq atomic.Uint64

// benchEvents returns n fresh events of the beet, received 1 ms apart from start.
func benchEvents(beetID int64, start time.Time, n int) []beet.Event {
	out := make([]beet.Event, n)
	for i := range out {
		var id beet.EventID
		binary.BigEndian.PutUint64(id[8:], benchSeq.Add(1))
		id[0] = 0xbe
		out[i] = beet.Event{ID: id, BeetID: beetID, ReceivedAt: start.Add(time.Duration(i) * time.Millisecond),
			Method: "GET", UserAgent: "curl/8.5.0"}
	}
	return out
}

// benchEngines runs fn once per engine on a fresh migrated store with one
// account and one beet.
func benchEngines(b *testing.B, fn func(b *testing.B, db *sqlstore.DB, bt *beet.Beet)) {
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			if e.name == "postgres" && os.Getenv(pgEnv) == "" {
				b.Skipf("PostgreSQL benchmarks skipped: %s is unset", pgEnv)
			}
			db := migrated(b, e.open(b))
			ctx := context.Background()
			a := &beet.Account{Plan: beet.PlanFree}
			if err := db.CreateAccount(ctx, a, &beet.User{Email: "bench@example.com"}); err != nil {
				b.Fatal(err)
			}
			bt := &beet.Beet{AccountID: a.ID, Name: "bench", Token: beet.NewToken(), Status: beet.StatusUp,
				Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}}
			if err := db.CreateBeet(ctx, bt); err != nil {
				b.Fatal(err)
			}
			fn(b, db, bt)
		})
	}
}

func BenchmarkFindBeetByToken(b *testing.B) {
	benchEngines(b, func(b *testing.B, db *sqlstore.DB, bt *beet.Beet) {
		ctx := context.Background()
		for b.Loop() {
			if _, err := db.FindBeetByToken(ctx, bt.Token); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchAddEvents(b *testing.B, batch int) {
	benchEngines(b, func(b *testing.B, db *sqlstore.DB, bt *beet.Beet) {
		ctx := context.Background()
		start := time.Now()
		for b.Loop() {
			// Building the events takes about 1% of the time measured;
			// StopTimer would cost more than it saves.
			ev := benchEvents(bt.ID, start, batch)
			if err := db.AddEvents(ctx, ev, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "events/s")
	})
}

func BenchmarkAddEvents1(b *testing.B)   { benchAddEvents(b, 1) }
func BenchmarkAddEvents100(b *testing.B) { benchAddEvents(b, 100) }

func BenchmarkFindEvents100(b *testing.B) {
	benchEngines(b, func(b *testing.B, db *sqlstore.DB, bt *beet.Beet) {
		ctx := context.Background()
		if err := db.AddEvents(ctx, benchEvents(bt.ID, time.Now().Add(-time.Hour), 10_000), nil); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			ev, err := db.FindEvents(ctx, beet.EventFilter{BeetID: bt.ID, Limit: 100})
			if err != nil || len(ev) != 100 {
				b.Fatalf("FindEvents = %d, %v", len(ev), err)
			}
		}
	})
}

// BenchmarkDeleteEventsBefore1000 times one clean-up batch of 1000 old
// events from a beet that also holds 10k recent ones.
func BenchmarkDeleteEventsBefore1000(b *testing.B) {
	benchEngines(b, func(b *testing.B, db *sqlstore.DB, bt *beet.Beet) {
		ctx := context.Background()
		now := time.Now()
		if err := db.AddEvents(ctx, benchEvents(bt.ID, now, 10_000), nil); err != nil {
			b.Fatal(err)
		}
		cutoff := now.Add(-time.Hour)
		for b.Loop() {
			b.StopTimer()
			if err := db.AddEvents(ctx, benchEvents(bt.ID, cutoff.Add(-24*time.Hour), 1000), nil); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			n, err := db.DeleteEventsBefore(ctx, bt.ID, cutoff, 1000)
			if err != nil || n != 1000 {
				b.Fatalf("DeleteEventsBefore = %d, %v", n, err)
			}
		}
	})
}
