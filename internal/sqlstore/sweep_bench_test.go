package sqlstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/sqlstore"
)

// The sweep benchmarks hold 1,000,000 beets, of which 1% (10,000) have a
// passed deadline: the sweeper must cost what is due, not what exists.
//
//	BEET_TEST_POSTGRES_URL=… go test -run '^$' -bench Sweep -benchtime 3x ./internal/sqlstore/
const (
	sweepBeets = 1_000_000
	sweepEvery = 100 // one beet in sweepEvery is due
)

var sweepT0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// seedSweep inserts sweepBeets hourly beets, up, last seen an hour ago;
// one in sweepEvery is due a minute ago, the rest in an hour.
func seedSweep(b *testing.B, db *sqlstore.DB, accountID int64) {
	rows := `SELECT $1, 'job ' || i, '', 'bt_sweep' || i, 'up', 'Up.', 0, 'UTC',
		'{"mode":"period","period_seconds":3600,"grace_seconds":60}', %s, $2,
		CASE WHEN i % $3 = 0 THEN CAST($4 AS BIGINT) ELSE CAST($5 AS BIGINT) END, 0, 0`
	var q string
	if db.Engine() == "postgres" {
		q = `INSERT INTO beets (account_id, name, description, token, status, status_reason, status_since, timezone,
			detection, allow_bots, last_event_at, due_at, created_at, updated_at) ` +
			fillIn(rows, "false") + ` FROM generate_series(1, $6::bigint) AS n(i)`
	} else {
		q = `INSERT INTO beets (account_id, name, description, token, status, status_reason, status_since, timezone,
			detection, allow_bots, last_event_at, due_at, created_at, updated_at)
			WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $6) ` +
			fillIn(rows, "0") + ` FROM n`
	}
	last := sweepT0.Add(-time.Hour)
	err := db.ExecForTest(context.Background(), q, accountID, last.UnixMicro(), sweepEvery,
		sweepT0.Add(-time.Minute).UnixMicro(), sweepT0.Add(time.Hour).UnixMicro(), sweepBeets)
	if err != nil {
		b.Fatal(err)
	}
}

// fillIn puts arg in place of the %s in format (the engines spell a
// false boolean differently).
func fillIn(format, arg string) string { return strings.Replace(format, "%s", arg, 1) }

// BenchmarkSweep1M: one full sweep of the 10,000 due beets (each flips
// down), as the sweeper job runs it: batches of 500 until one is short.
func BenchmarkSweep1M(b *testing.B) {
	benchEngines(b, func(b *testing.B, db *sqlstore.DB, bt *beet.Beet) {
		seedSweep(b, db, bt.AccountID)
		svc := service.New(db, service.Options{})
		ctx := context.Background()
		reset := `UPDATE beets SET status = 'up', due_at = $1 WHERE token LIKE 'bt_sweep%' AND status = 'down'`
		b.ResetTimer()
		due := 0
		for b.Loop() {
			b.StopTimer()
			if err := db.ExecForTest(ctx, reset, sweepT0.Add(-time.Minute).UnixMicro()); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			for {
				flipped, examined, err := svc.Sweep(ctx, sweepT0, sweepT0, 500)
				if err != nil {
					b.Fatal(err)
				}
				due += flipped
				if examined < 500 {
					break
				}
			}
		}
		if want := b.N * sweepBeets / sweepEvery; due != want {
			b.Fatalf("flipped %d beets, want %d", due, want)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(due), "ns/due-beet")
	})
}

// BenchmarkSweepIdle1M: a sweeper tick when nothing is due among 1,000,000
// beets; the deadline index makes it one index probe.
func BenchmarkSweepIdle1M(b *testing.B) {
	benchEngines(b, func(b *testing.B, db *sqlstore.DB, bt *beet.Beet) {
		seedSweep(b, db, bt.AccountID)
		svc := service.New(db, service.Options{})
		ctx := context.Background()
		early := sweepT0.Add(-2 * time.Minute) // before every deadline
		b.ResetTimer()
		for b.Loop() {
			if _, examined, err := svc.Sweep(ctx, early, early, 500); err != nil || examined != 0 {
				b.Fatalf("idle sweep examined %d: %v", examined, err)
			}
		}
	})
}
