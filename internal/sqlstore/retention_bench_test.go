package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/sqlstore"
)

// The retention benchmarks hold retentionBeets beets of one free account,
// each with an event of today; each pass comes an hour after the last,
// when 1% of the beets have 10 events that crossed the 30-day cutoff in
// that hour. "by_time" is the clean-up as it runs (service.Cleanup:
// partitions past 3 years, then each plan from its mark);
// "per_beet" is the clean-up before it (every beet of each plan probed,
// then one DELETE per beet with old events). Both delete the same events.
// The idle cases are passes when nothing expired since the last one.
//
//	BEET_TEST_POSTGRES_URL=… go test -run '^$' -bench RetentionPass -benchtime 5x ./internal/sqlstore/
const (
	retentionBeets = 100_000
	retentionEvery = 100 // one beet in retentionEvery has events to delete each pass
	retentionPer   = 10
)

var retentionT0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func seedRetention(b *testing.B, db *sqlstore.DB, accountID int64) {
	rows := `SELECT $1, 'ret ' || i, '', 'bt_ret' || i, 'up', 'Up.', 0, 'UTC',
		'{"mode":"auto"}', %s, $2, NULL, 0, 0`
	cols := `INSERT INTO beets (account_id, name, description, token, status, status_reason, status_since, timezone,
		detection, allow_bots, last_event_at, due_at, created_at, updated_at) `
	var q, ev string
	if db.Engine() == "postgres" {
		q = cols + fillIn(rows, "false") + ` FROM generate_series(1, $3::bigint) AS n(i)`
		ev = `INSERT INTO events (id, beet_id, received_at, method, user_agent)
			SELECT decode(md5(random()::text || id::text), 'hex'), id, $1, 'GET', 'curl/8.5.0' FROM beets WHERE token LIKE 'bt_ret%'`
	} else {
		q = cols + `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $3) ` + fillIn(rows, "0") + ` FROM n`
		ev = `INSERT INTO events (id, beet_id, received_at, method, user_agent)
			SELECT randomblob(16), id, $1, 'GET', 'curl/8.5.0' FROM beets WHERE token LIKE 'bt_ret%'`
	}
	ctx := context.Background()
	if err := db.ExecForTest(ctx, q, accountID, retentionT0.UnixMicro(), retentionBeets); err != nil {
		b.Fatal(err)
	}
	if err := db.ExecForTest(ctx, ev, retentionT0.UnixMicro()); err != nil {
		b.Fatal(err)
	}
}

// expireSome inserts retentionPer events, within [from, to), for one beet
// in retentionEvery.
func expireSome(b *testing.B, db *sqlstore.DB, from, to time.Time) {
	step := to.Sub(from).Microseconds() / (retentionPer + 1)
	var q string
	if db.Engine() == "postgres" {
		q = `INSERT INTO events (id, beet_id, received_at, method, user_agent)
			SELECT decode(md5(random()::text || b.id::text || k::text), 'hex'), b.id, $1 + k * $2, 'GET', 'curl/8.5.0'
			FROM beets b, generate_series(1, $3::bigint) AS s(k) WHERE b.token LIKE 'bt_ret%' AND b.id % $4 = 0`
	} else {
		q = `INSERT INTO events (id, beet_id, received_at, method, user_agent)
			WITH RECURSIVE s(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM s WHERE k < $3)
			SELECT randomblob(16), b.id, $1 + k * $2, 'GET', 'curl/8.5.0'
			FROM beets b, s WHERE b.token LIKE 'bt_ret%' AND b.id % $4 = 0`
	}
	if err := db.ExecForTest(context.Background(), q, from.UnixMicro(), step, retentionPer, retentionEvery); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkRetentionPass(b *testing.B) {
	for _, c := range []struct {
		way  string
		idle bool
	}{{"by_time", false}, {"per_beet", false}, {"by_time/idle", true}, {"per_beet/idle", true}} {
		way := c.way
		b.Run(way, func(b *testing.B) {
			benchEngines(b, func(b *testing.B, db *sqlstore.DB, bt *beet.Beet) {
				seedRetention(b, db, bt.AccountID)
				svc := service.New(db, service.Options{CleanupBatch: 1000})
				ctx := context.Background()
				now := retentionT0.AddDate(0, 0, 20)
				if _, err := svc.Cleanup(ctx, now, false); err != nil { // the marks' first pass
					b.Fatal(err)
				}
				var deleted int64
				b.ResetTimer()
				for b.Loop() {
					b.StopTimer()
					prev := beet.PlanFree.RetentionCutoff(now)
					now = now.Add(time.Hour)
					if !c.idle {
						expireSome(b, db, prev, beet.PlanFree.RetentionCutoff(now))
					}
					b.StartTimer()
					if way == "by_time" || way == "by_time/idle" {
						rep, err := svc.Cleanup(ctx, now, false)
						if err != nil {
							b.Fatal(err)
						}
						deleted += rep.Total
					} else {
						deleted += perBeetCleanup(b, db, now)
					}
				}
				want := int64(b.N * retentionBeets / retentionEvery * retentionPer)
				if c.idle {
					want = 0
				}
				if deleted != want {
					b.Fatalf("deleted %d events, want %d", deleted, want)
				}
				b.ReportMetric(float64(deleted)/float64(b.N), "events/pass")
			})
		})
	}
}

// perBeetCleanup is the clean-up as it was before the marks: every beet of
// each plan probed for old events, then one DELETE per beet that has some.
func perBeetCleanup(b *testing.B, db *sqlstore.DB, now time.Time) int64 {
	ctx := context.Background()
	var total int64
	for _, p := range beet.Plans {
		cutoff := p.RetentionCutoff(now)
		var after int64
		for {
			ids, err := db.BeetsWithEventsBefore(ctx, p, cutoff, after, 500)
			if err != nil {
				b.Fatal(err)
			}
			for _, id := range ids {
				for {
					n, err := db.DeleteEventsBefore(ctx, id, cutoff, 1000)
					if err != nil {
						b.Fatal(err)
					}
					total += n
					if n < 1000 {
						break
					}
				}
			}
			if len(ids) < 500 {
				break
			}
			after = ids[len(ids)-1]
		}
	}
	return total
}
