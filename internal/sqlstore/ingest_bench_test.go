package sqlstore_test

import (
	"context"
	"encoding/binary"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/sqlstore"
)

// BenchmarkAddEventsSpread is the ingestion commit of bench/ingest's steady
// phase: each commit holds one ping for each of 16 (or 64) beets taken
// round-robin from 10,000 (1 and 4: the small groups of moderate rates,
// where a commit's fixed cost is most of it), with tokens (matched at commit, as the handler
// sends them) and an observer that moves each beet's deadline and rewrites
// its model, as detection does. Each commit has a deadline, as the
// writer's do. Besides ns/op (which includes the fsync of
// each commit) it reports the process's CPU time per event, which does not
// depend on how long the disk takes:
//
//	go test -run '^$' -bench AddEventsSpread -benchtime 2000x ./internal/sqlstore/
func BenchmarkAddEventsSpread(b *testing.B) {
	for _, per := range []int{1, 4, 16, 64} {
		b.Run(strconv.Itoa(per), func(b *testing.B) {
			benchEngines(b, func(b *testing.B, db *sqlstore.DB, first *beet.Beet) {
				benchSpread(b, db, first.AccountID, per)
			})
		})
	}
}

func benchSpread(b *testing.B, db *sqlstore.DB, account int64, per int) {
	ctx := context.Background()
	const nBeets = 10000
	// The beets are made in one statement (one commit, not 10,000).
	model := make([]byte, 200) // about a learned model's size
	det := `{"mode":"auto"}`
	us := time.Now().UnixMicro()
	if err := db.ExecForTest(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1)
		INSERT INTO beets (account_id, name, token, status, status_since, timezone, detection, model, created_at, updated_at)
		SELECT $2, 'spread ' || i, 'spread-token-' || i, 'up', $3, 'UTC', $4, $5, $3, $3 FROM n`,
		nBeets, account, us, det, model); err != nil {
		b.Fatal(err)
	}
	toks := make([]string, nBeets)
	for i := range toks {
		toks[i] = "spread-token-" + strconv.Itoa(i+1)
	}
	observe := func(bt *beet.Beet, sp beet.EventSpan) []beet.Flip {
		due := sp.Last.Add(time.Hour)
		bt.DueAt = &due
		m := make([]byte, len(bt.Model))
		copy(m, bt.Model)
		if len(m) > 0 {
			m[0]++
		}
		bt.Model = m
		return nil
	}
	next := 0
	batch := func(now time.Time) []beet.Event {
		evs := make([]beet.Event, per)
		for i := range evs {
			var id beet.EventID
			binary.BigEndian.PutUint64(id[0:8], uint64(now.UnixMilli())<<16)
			binary.BigEndian.PutUint64(id[8:], benchSeq.Add(1))
			evs[i] = beet.Event{ID: id, Token: toks[next%nBeets], ReceivedAt: now, Method: "GET",
				UserAgent: "bench steady " + strconv.Itoa(next)}
			next++
		}
		return evs
	}
	// Every beet has its first events (and is in the store's cache), as
	// in the steady phase after its warm-up.
	for range nBeets / per {
		if err := db.AddEvents(ctx, batch(time.Now()), observe); err != nil {
			b.Fatal(err)
		}
	}
	cpu0, user0 := cpuTime(), userTime()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := steadyCommit(ctx, db, batch(time.Now().UTC().Truncate(time.Microsecond)), observe); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N*per), "cpu-µs/event")
	// User time alone leaves out the kernel's writes and fsyncs, whose
	// cost follows the disk and the machine's load more than the code.
	b.ReportMetric(float64((userTime()-user0).Microseconds())/float64(b.N*per), "user-µs/event")
}

// steadyCommit is AddEvents under a name of its own, so that an instruction
// count can take the measured commits only:
//
//	go test -c -o /tmp/sqlstore.test ./internal/sqlstore/ && cd internal/sqlstore &&
//	GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind '--toggle-collect=*steadyCommit' \
//	  /tmp/sqlstore.test -test.run '^$' -test.bench 'AddEventsSpread/16/sqlite' -test.benchtime 200x
//
//go:noinline
func steadyCommit(ctx context.Context, db *sqlstore.DB, events []beet.Event, observe beet.Observer) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second) // the writer's CommitTimeout
	defer cancel()
	return db.AddEvents(ctx, events, observe)
}

// userTime is the CPU time this process has used in user space.
func userTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano())
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
