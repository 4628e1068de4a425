package sqlstore_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// pgProcCPU is the CPU time of every postgres process on this machine,
// by pid.
func pgProcCPU() map[int]time.Duration {
	out := map[int]time.Duration{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || !strings.Contains(s[:i], "(postgres") {
			continue
		}
		f := strings.Fields(s[i+2:])
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		out[pid] = time.Duration(ut+st) * 10 * time.Millisecond
	}
	return out
}

// BenchmarkPGCommit times AddEvents on PostgreSQL with token events of
// distinct beets (as ingestion sends them), in groups of 1 and 10, by 1 or
// 4 goroutines at once, with a detection-like observer, on the locked path
// and on the cached path; it reports the CPU time per commit of this
// process and of its PostgreSQL backends (PostgreSQL must run on this
// machine to count them) and the share of the beets' updates that were
// HOT (no new index entries):
//
//	BEET_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable \
//	  go test -run '^$' -bench PGCommit -benchtime 3000x -count 3 ./internal/sqlstore/
func BenchmarkPGCommit(b *testing.B) {
	if os.Getenv(pgEnv) == "" {
		b.Skip("needs " + pgEnv)
	}
	db := migrated(b, openPostgresAt(b, pgSchemaURL(b)+"&application_name=pgcommitbench"))
	mine := func() map[int]bool {
		out := map[int]bool{}
		rows, err := db.ReadForTest(context.Background(), `SELECT pid FROM pg_stat_activity WHERE application_name = 'pgcommitbench'`)
		if err != nil {
			b.Fatal(err)
		}
		for _, pid := range rows {
			out[int(pid)] = true
		}
		return out
	}
	ctx := context.Background()
	a := &beet.Account{Plan: beet.PlanPro}
	if err := db.CreateAccount(ctx, a, &beet.User{Email: "bench@example.com"}); err != nil {
		b.Fatal(err)
	}
	const nBeets = 2000
	toks := make([]string, nBeets)
	for i := range toks {
		bt := &beet.Beet{AccountID: a.ID, Name: "b" + strconv.Itoa(i), Token: beet.NewToken(), Status: beet.StatusUp,
			Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}}
		if err := db.CreateBeet(ctx, bt); err != nil {
			b.Fatal(err)
		}
		toks[i] = bt.Token
	}
	// Like detection: a model of about 200 bytes rewritten, and the
	// deadline moved later with each event.
	model := make([]byte, 198)
	observe := func(x *beet.Beet, sp beet.EventSpan) []beet.Flip {
		model[0]++
		x.Model = append(x.Model[:0], model...)
		due := sp.Last.Add(time.Minute)
		x.DueAt = &due
		return nil
	}
	// hot reads the beets' updates and HOT updates so far (the statistics
	// reach the view within a second of a transaction).
	hot := func() (upd, hot int64) {
		time.Sleep(1100 * time.Millisecond)
		v, err := db.ReadForTest(context.Background(), `SELECT n_tup_upd FROM pg_stat_user_tables WHERE relid = 'beets'::regclass
			UNION ALL SELECT n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = 'beets'::regclass`)
		if err != nil || len(v) != 2 {
			b.Fatal(v, err)
		}
		return v[0], v[1]
	}
	var seq uint64
	var mu sync.Mutex
	next := func(n int) []beet.Event {
		mu.Lock()
		defer mu.Unlock()
		out := make([]beet.Event, n)
		for i := range out {
			seq++
			binary.BigEndian.PutUint64(out[i].ID[8:], seq)
			out[i].ID[0] = 0xbf
			out[i].Token = toks[seq%nBeets]
			out[i].ReceivedAt = time.Now()
			out[i].Method, out[i].UserAgent = "GET", "bench"
		}
		return out
	}
	_ = db.AddEvents(ctx, next(nBeets), observe) // cache warm
	for _, par := range []int{1, 4} {
		for _, group := range []int{1, 10} {
			for _, locked := range []bool{true, false} {
				path := "cached"
				if locked {
					path = "locked"
				}
				b.Run(fmt.Sprintf("par%d/group%d/%s", par, group, path), func(b *testing.B) {
					db.SetPGLockedOnlyForTest(locked)
					upd0, hot0 := hot()
					cpu0 := pgProcCPU()
					var ru0, ru1 syscall.Rusage
					syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
					var wg sync.WaitGroup
					per := make(chan struct{}, 1<<20)
					b.ResetTimer()
					for range b.N {
						per <- struct{}{}
					}
					close(per)
					for range par {
						wg.Go(func() {
							for range per {
								if err := db.AddEvents(ctx, next(group), observe); err != nil {
									b.Error(err)
									return
								}
							}
						})
					}
					wg.Wait()
					b.StopTimer()
					cpu1 := pgProcCPU()
					syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
					goCPU := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
					b.ReportMetric(float64(goCPU.Microseconds())/float64(b.N), "go-µs/commit")
					var total time.Duration
					pids := mine()
					for pid, c := range cpu1 {
						if pids[pid] {
							total += c - cpu0[pid]
						}
					}
					b.ReportMetric(float64(db.PGStaleForTest()), "stale")
					b.ReportMetric(float64(total.Microseconds())/float64(b.N), "pg-µs/commit")
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
					upd1, hot1 := hot()
					b.ReportMetric(100*float64(hot1-hot0)/float64(max(1, upd1-upd0)), "%HOT")
				})
			}
		}
	}
}
