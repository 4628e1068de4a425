// Command ingest is Beet's ingestion load benchmark. It starts, each as its
// own process on loopback and all at once,
//
//  1. a bare net/http server answering the same GIF (the ceiling),
//  2. the durable floor (-floor): the same server appending each request to
//     a file and answering after a group fsync, the least any server must
//     do to acknowledge an event durably,
//  3. Beet on SQLite, and
//  4. Beet on PostgreSQL (when -postgres or BEET_TEST_POSTGRES_URL is set;
//     with -postgres-socket, once over TCP and once over the Unix socket),
//
// and runs every phase against each of them in turn, so the ratios to the
// bare server are measured side by side, minutes apart at most, on a
// machine whose speed drifts:
//
//   - steady: a closed loop of -conns keep-alive connections sending GET
//     beacons round-robin over -tokens beets for -duration;
//   - ladder: open-loop runs of -step each at rising rates, to find the
//     highest rate whose p99 stays under -p99 (latency counts from when each
//     request was due, so a stall is not hidden); each rate is run -repeat
//     times by every server, the servers taking turns, and the median p99
//     decides;
//   - rate: an open loop at -rate requests/s for -duration, -repeat times
//     for each server, the servers taking turns;
//   - burst: -burst beets, each pinged once on a new connection, all due at
//     once (the top of the hour, when every cron job fires).
//
// Every beet has had its first event before anything is measured (detection
// is on, as in production). After every phase the events in the database
// are checked against the requests that got a 200: each request carries a
// unique User-Agent, which the event keeps, so a lost event is named, not
// estimated. The requests are written by hand on plain TCP connections
// (-client raw; -client nethttp uses net/http's Client, which costs the
// shared CPUs about twice as much a request), the same for every server.
// With -profile DIR, CPU and allocation profiles of each Beet
// server are saved for the steady, rate and burst phases. A flood of -flood
// random well-formed tokens against Beet on SQLite measures peak RSS.
//
//	go run ./bench/ingest                      # the full run
//	go run ./bench/ingest -duration 5s -flood 0 -profile /tmp/prof
package main

import (
	"bufio"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/bench/benchkit"
	"github.com/beethq/beet/internal/sqlstore"
)

var (
	duration     = flag.Duration("duration", 10*time.Second, "length of the steady and rate runs")
	step         = flag.Duration("step", 3*time.Second, "length of each open-loop run of the ladder")
	conns        = flag.Int("conns", 64, "concurrent keep-alive connections")
	tokens       = flag.Int("tokens", 10000, "beets of the steady runs, hit round-robin")
	rate         = flag.Int("rate", 5000, "requests/s of the rate run")
	repeat       = flag.Int("repeat", 3, "runs of each server at each ladder rate and in the rate phase, servers taking turns; the median p99 counts")
	maxP99       = flag.Duration("p99", 10*time.Millisecond, "p99 an open-loop rate must stay under in the ladder")
	ladderFrom   = flag.Int("ladder-from", 1000, "first rate of the ladder, requests/s (then -ladder-step percent more each step, in steps of 250)")
	ladderGrowth = flag.Int("ladder-step", 25, "how much each rate of the ladder adds to the one before, percent (1 to 100): smaller steps tell ratios apart more finely, and take longer")
	burstN       = flag.Int("burst", 20000, "beets pinged once each on new connections in the burst (0 skips it)")
	burstC       = flag.Int("burst-conns", 1000, "connections opened at once in the burst")
	serverLog    = flag.String("server-log", "", "directory to write each server's output to, one file a server (for GODEBUG=gctrace=1 and the servers' logs)")
	flood        = flag.Int("flood", 0, "random tokens sent in the flood run against SQLite (0 skips it)")
	floor        = flag.Bool("floor", true, "run the durable floor too: the bare server appending each request to a file and answering after a group fsync")
	withSQLite   = flag.Bool("sqlite", true, "run Beet on SQLite too (false: only the bare server and PostgreSQL)")
	sqlFsync     = flag.String("sqlite-fsync", "", "comma-separated BEET_INGEST_FSYNC values (overlap, commit): one Beet on SQLite for each, side by side; a shorthand for -sqlite-env, which wins (empty: one with the default)")
	sqlEnv       = flag.String("sqlite-env", "", "';'-separated sets of space-separated KEY=VALUE settings (say \"BEET_INGEST_ACK=commit;BEET_INGEST_ACK=journal\"): one Beet on SQLite for each set, side by side, named by it (empty: one with the default)")
	pgEnv        = flag.String("pg-env", "", "as -sqlite-env, for Beet on PostgreSQL")
	pgLanes      = flag.String("pg-lanes", "", "comma-separated BEET_INGEST_LANES values: one Beet on PostgreSQL for each, side by side; a shorthand for -pg-env, which wins (empty: one with the default)")
	pgURL        = flag.String("postgres", os.Getenv("BEET_TEST_POSTGRES_URL"), "PostgreSQL server for the PostgreSQL run (empty skips it)")
	pgSocket     = flag.String("postgres-socket", "", "directory of the same PostgreSQL server's Unix socket (say /var/run/postgresql): each Beet on PostgreSQL runs twice, side by side, over -postgres and over this socket")
	profile      = flag.String("profile", "", "directory to save CPU and allocation profiles of the Beet servers in")
	traceFor     = flag.Duration("trace", 0, "with -profile, also save an execution trace of each Beet server this long from each phase's start (for go tool trace -pprof=sched)")
	only         = flag.String("phases", "steady,ladder,rate,burst", "phases to run, comma-separated")
	sqlBefore    = flag.String("sqlite-before", "", "a beet binary built from another commit: run it on SQLite too, as \"before\", side by side with this tree's")
	pgBefore     = flag.String("pg-before", "", "a beet binary built from another commit: run it on PostgreSQL too, as \"before\", side by side with this tree's")
	deadlines    = flag.Bool("deadlines", false, "seed every beet with a deadline that each event moves later (period mode, 1 h + 5 min grace); default: auto mode in learning, so every event rewrites its model but sets no deadline, as in every earlier round")
	clientKind   = flag.String("client", "raw", "load generator's HTTP client: raw (a hand-written request on a plain TCP connection, the answer read by http.ReadResponse) or nethttp (net/http's Client)")
)

// target is one server under test.
type target struct {
	name  string
	proc  *proc
	db    *sql.DB // nil for the bare server and the durable floor
	log   string  // the durable floor's log file ("" for the others)
	toks  []string
	acked map[string]bool // User-Agents of the requests that got a 200, since the last loss check
	mu    sync.Mutex
	app   string            // application_name of its PostgreSQL connections ("" on SQLite)
	pgCPU map[string]string // PostgreSQL backends' CPU µs a request, by phase
}

func main() {
	flag.Parse()
	log.SetFlags(0)
	if *ladderGrowth < 1 || *ladderGrowth > 100 {
		log.Fatalf("-ladder-step %d: want 1 to 100 (percent)", *ladderGrowth)
	}
	dir, err := os.MkdirTemp("", "beet-bench-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for _, d := range []string{*profile, *serverLog} {
		if d != "" {
			if err := os.MkdirAll(d, 0o755); err != nil {
				log.Fatal(err)
			}
		}
	}
	beetBin := benchkit.Build(dir, "beet", "./cmd/beet")
	bareBin := benchkit.Build(dir, "bare", "./bench/bare")
	nBeets := max(*tokens, *burstN)

	bare := &target{name: "bare net/http", proc: startProc(bareBin, nil, regexp.MustCompile(`^(http://\S+)$`)), toks: randomTokens(nBeets)}
	defer bare.proc.stop()
	targets := []*target{bare}
	if *floor {
		logFile := filepath.Join(dir, "floor.log")
		targets = append(targets, &target{name: "durable floor", log: logFile, toks: bare.toks,
			proc: startProc(bareBin, []string{"-durable", logFile}, regexp.MustCompile(`^(http://\S+)$`))})
	}

	if *withSQLite {
		for i, set := range settingSets(*sqlEnv, "BEET_INGEST_FSYNC", *sqlFsync) {
			name, file := "Beet, SQLite", "beet.db"
			if set != nil {
				name, file = "Beet, SQLite, "+strings.Join(set, " "), fmt.Sprintf("beet-env%d.db", i)
			}
			targets = append(targets, startTarget(name, beetBin, "sqlite://"+filepath.Join(dir, file), dir, nBeets, set...))
		}
		if *sqlBefore != "" {
			targets = append(targets, startTarget("Beet, SQLite, before", *sqlBefore, "sqlite://"+filepath.Join(dir, "beet-before.db"), dir, nBeets))
		}
	}
	if *pgURL != "" {
		for _, set := range settingSets(*pgEnv, "BEET_INGEST_LANES", *pgLanes) {
			for _, via := range pgRoutes(*pgURL, *pgSocket) {
				schemaURL, drop := benchkit.PGSchema(via.url, "beet_bench_")
				defer drop()
				name := "Beet, PostgreSQL" + via.name
				if set != nil {
					name += ", " + strings.Join(set, " ")
				}
				targets = append(targets, startTarget(name, beetBin, schemaURL, dir, nBeets, set...))
			}
		}
		if *pgBefore != "" {
			schemaURL, drop := benchkit.PGSchema(*pgURL, "beet_bench_")
			defer drop()
			targets = append(targets, startTarget("Beet, PostgreSQL, before", *pgBefore, schemaURL, dir, nBeets))
		}
	}
	defer func() {
		for _, t := range targets[1:] {
			t.proc.stop()
			if t.db != nil {
				t.db.Close()
			}
		}
	}()
	for _, t := range targets[1:] {
		if t.db == nil {
			continue
		}
		warmUp(t.proc.url, t.toks)
		t.checkLoss() // the warm-up's events
	}

	stalls := startStallMeter()
	fmt.Printf("## Ingestion load (%s)\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	seeded := "every beet past its first event"
	if *deadlines {
		seeded = "every beet up with a deadline (period 1 h) that each event moves"
	}
	fmt.Printf("%d CPUs shared by the servers, PostgreSQL and the load generator; %d beets, detection on, %s; GET beacons.\n\n",
		runtime.NumCPU(), nBeets, seeded)
	phases := strings.Split(*only, ",")

	if slices.Contains(phases, "steady") {
		fmt.Printf("### Steady: closed loop, %d keep-alive connections, %d beets round-robin, %s\n\n", *conns, *tokens, *duration)
		fmt.Println("| server | req/s | p50 | p99 | errors | ratio to bare | events lost | server CPU µs/req | commits | events/commit | commit µs | detect µs/beet | allocs/req | generator CPU µs/req |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
		var bareRes result
		for _, t := range targets {
			before, cpu := t.metrics(), cpuTime(t.proc)
			stopProf := t.startProfile("steady", *duration-time.Second)
			gen, pg := benchkit.SelfCPU(), t.pgBackends()
			r := closedLoop(t, "steady", t.toks[:*tokens])
			gen = benchkit.SelfCPU() - gen
			t.notePG("steady", pg, r.n)
			stopProf()
			cpu = cpuTime(t.proc) - cpu
			m := t.metrics().minus(before)
			if t == bare {
				bareRes = r
			}
			fmt.Printf("| %s | %.0f | %s | %s | %d | %.2f | %s | %.0f | %s | %.0f |\n", t.name, r.rps, ms(r.p50), ms(r.p99), r.errors, r.rps/bareRes.rps, t.checkLoss(),
				float64(cpu.Microseconds())/float64(max(1, r.n)), m.row(r.n), float64(gen.Microseconds())/float64(max(1, r.n)))
		}
		fmt.Printf("\n%s\n", stalls.take())
		fmt.Println()
	}

	if slices.Contains(phases, "ladder") {
		fmt.Printf("### Ladder: open loop, %s per run, %d runs per rate for each server, servers interleaved, each rate %d%% above the one before; the highest rate whose median p99 stays under %s\n\n", *step, *repeat, *ladderGrowth, *maxP99)
		fmt.Println("| server | highest rate | its median p99 (each run) | next rate tried | its median p99 (each run) | ratio to bare | events lost |")
		fmt.Println("|---|---|---|---|---|---|---|")
		steps := ladder(targets)
		bareBest := steps[0].best
		for i, t := range targets {
			st := steps[i]
			ratio := "-" // the bare server held no rate: no ratio to give
			if bareBest > 0 {
				ratio = fmt.Sprintf("%.2f", float64(st.best)/float64(bareBest))
			}
			fmt.Printf("| %s | %d | %s | %d | %s | %s | %s |\n", t.name, st.best, st.bestRes, st.next, st.nextRes, ratio, t.checkLoss())
		}
		fmt.Printf("\n%s\n", stalls.take())
		fmt.Println()
	}

	if slices.Contains(phases, "rate") {
		fmt.Printf("### Rate: open loop at %d req/s for %s, %d runs for each server, servers interleaved\n\n", *rate, *duration, *repeat)
		fmt.Println("| server | achieved req/s | p50 | median p99 (each run) | max | errors | events lost | events/commit | commit µs | commits over 5 ms | writer busy | server CPU µs/req |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
		runs := make([][]result, len(targets))
		got := make([]metrics, len(targets))
		cpus := make([]time.Duration, len(targets))
		interleave(targets, *repeat, func(i int, t *target) {
			m0, pg, cpu := t.metrics(), t.pgBackends(), cpuTime(t.proc)
			var stopProf func()
			if len(runs[i]) == 0 { // the first run of each server only: one profile a server
				stopProf = t.startProfile("rate", *duration-time.Second)
			}
			r := openLoop(t, "rate", t.toks[:*tokens], *rate, *duration)
			cpus[i] += cpuTime(t.proc) - cpu
			if stopProf != nil {
				stopProf()
			}
			t.notePG("rate", pg, r.n)
			if m := t.metrics(); m != nil {
				got[i] = got[i].plus(m.minus(m0))
			}
			runs[i] = append(runs[i], r)
		})
		for i, t := range targets {
			rs := runs[i]
			var n, errs int
			var elapsed time.Duration
			var p50s []time.Duration
			var worst time.Duration
			for _, r := range rs {
				n += r.n
				errs += int(r.errors)
				elapsed += r.elapsed
				p50s = append(p50s, r.p50)
				worst = max(worst, r.max)
			}
			fmt.Printf("| %s | %.0f | %s | %s | %s | %d | %s | %.1f | %.0f | %s | %s | %.0f |\n", t.name, float64(n)/elapsed.Seconds(), ms(median(p50s)), p99s(rs), ms(worst), errs, t.checkLoss(),
				got[i].perCommit(), got[i].commitMicros(), got[i].slowCommits(), got[i].busy(elapsed), float64(cpus[i].Microseconds())/float64(max(1, n)))
		}
		fmt.Printf("\n%s\n", stalls.take())
		fmt.Println()
	}

	if slices.Contains(phases, "burst") && *burstN > 0 {
		fmt.Printf("### Burst: %d beets pinged once each, all at once, each on a new connection (%d dialling at a time)\n\n", *burstN, *burstC)
		fmt.Println("| server | time | p50 | p99 | max | errors | events lost | server CPU µs/req | commits | events/commit | commit µs | detect µs/beet | allocs/req | generator CPU µs/req |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
		for _, t := range targets {
			before, cpu := t.metrics(), cpuTime(t.proc)
			stopProf := t.startProfile("burst", 3*time.Second)
			gen, pg := benchkit.SelfCPU(), t.pgBackends()
			r := burst(t, t.toks[:*burstN])
			gen = benchkit.SelfCPU() - gen
			t.notePG("burst", pg, r.n)
			stopProf()
			cpu = cpuTime(t.proc) - cpu
			m := t.metrics().minus(before)
			fmt.Printf("| %s | %s | %s | %s | %s | %d | %s | %.0f | %s | %.0f |\n", t.name, ms(r.elapsed), ms(r.p50), ms(r.p99), ms(r.max), r.errors, t.checkLoss(),
				float64(cpu.Microseconds())/float64(max(1, r.n)), m.row(r.n), float64(gen.Microseconds())/float64(max(1, r.n)))
		}
		fmt.Printf("\n%s\n", stalls.take())
		fmt.Println()
	}

	if len(targets[len(targets)-1].pgCPU) > 0 {
		fmt.Println("### PostgreSQL backends' CPU µs a request (the server's share of the same two cores)")
		fmt.Println()
		fmt.Println("| server | steady | rate | burst |")
		fmt.Println("|---|---|---|---|")
		for _, t := range targets {
			if t.app != "" {
				fmt.Printf("| %s | %s | %s | %s |\n", t.name, cmp.Or(t.pgCPU["steady"], "-"), cmp.Or(t.pgCPU["rate"], "-"), cmp.Or(t.pgCPU["burst"], "-"))
			}
		}
		fmt.Println()
	}

	if *flood > 0 {
		fsrv := startBeet(beetBin, "sqlite://"+filepath.Join(dir, "flood.db"), dir)
		base := benchkit.RSS(fsrv.cmd.Process.Pid)
		peak := floodRun(fsrv, *flood)
		fsrv.stop()
		fmt.Printf("Flood: %d random well-formed tokens (unknown to Beet) against Beet on SQLite: RSS %.0f MiB before, peak %.0f MiB.\n",
			*flood, float64(base)/1024, float64(peak)/1024)
	}
}

type proc struct {
	cmd     *exec.Cmd
	url     string
	debug   chan string // the profiler's base URL, once announced
	metrics chan string // the admin listener's /metrics URL, once announced
}

func (p *proc) stop() { benchkit.Stop(p.cmd) }

// debugURL waits briefly for the profiler's announcement ("" if none).
func (p *proc) debugURL() string {
	select {
	case u := <-p.debug:
		p.debug <- u
		return u
	case <-time.After(5 * time.Second):
		return ""
	}
}

var (
	debugLine   = regexp.MustCompile(`msg="profiler listening" url=(http://\S+)/debug/pprof/`)
	metricsLine = regexp.MustCompile(`msg="admin listening" url=(http://\S+/metrics)`)
)

// metricsURL returns the admin listener's /metrics URL.
func (p *proc) metricsURL() string {
	select {
	case u := <-p.metrics:
		p.metrics <- u
		return u
	case <-time.After(5 * time.Second):
		log.Fatal("the server announced no admin listener")
		return ""
	}
}

// startProc runs bin and waits for a line matching re (its URL) on stdout
// or stderr. It passes on the server's errors.
func startProc(bin string, args []string, re *regexp.Regexp, env ...string) *proc {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	p := &proc{cmd: cmd, debug: make(chan string, 1), metrics: make(chan string, 1)}
	found := make(chan string, 1)
	var logf io.Writer = io.Discard
	if *serverLog != "" {
		f, err := os.Create(filepath.Join(*serverLog, fmt.Sprintf("%s-%d.log", filepath.Base(bin), logSeq.Add(1))))
		if err != nil {
			log.Fatal(err)
		}
		logf = f
	}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if m := debugLine.FindStringSubmatch(sc.Text()); m != nil {
				p.debug <- m[1]
			}
			if m := metricsLine.FindStringSubmatch(sc.Text()); m != nil {
				p.metrics <- m[1]
			}
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
			if strings.Contains(sc.Text(), "level=ERROR") {
				log.Printf("%s: %s", filepath.Base(bin), sc.Text())
			}
		}
	}()
	select {
	case p.url = <-found:
		return p
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		log.Fatalf("%s did not start", bin)
	}
	return nil
}

func startBeet(bin, dbURL, dir string, extra ...string) *proc {
	env := []string{"BEET_DATABASE_URL=" + dbURL, "BEET_SPOOL_PATH=" + filepath.Join(dir, strconv.FormatInt(time.Now().UnixNano(), 36)+".spool"),
		"BEET_LOG_LEVEL=info", "BEET_METRICS_LISTEN=127.0.0.1:0"}
	if *profile != "" {
		env = append(env, "BEET_DEBUG_LISTEN=127.0.0.1:0")
	}
	env = append(env, extra...)
	return startProc(bin, []string{"serve", "--listen", "127.0.0.1:0", "--cleanup-interval", "0"},
		regexp.MustCompile(`msg=listening .*\surl=(http://\S+)`), env...)
}

func startTarget(name, bin, dbURL, dir string, n int, env ...string) *target {
	app := ""
	if strings.HasPrefix(dbURL, "postgres") {
		app = fmt.Sprintf("beet_bench_%d", runSeq.Add(1))
		dbURL += "&application_name=" + app
	}
	toks, db := seed(dbURL, n)
	return &target{name: name, proc: startBeet(bin, dbURL, dir, env...), db: db, toks: toks, app: app, pgCPU: map[string]string{}}
}

// pgBackends is the CPU time of each PostgreSQL backend serving t, by pid
// (nil unless t is on a PostgreSQL server on this machine): its commits
// cost as much CPU there as in Beet, on the same two cores.
func (t *target) pgBackends() map[int]time.Duration {
	if t.app == "" {
		return nil
	}
	rows, err := t.db.Query(`SELECT pid FROM pg_stat_activity WHERE application_name = $1`, t.app)
	if err != nil {
		return nil
	}
	defer rows.Close()
	out := map[int]time.Duration{}
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) == nil {
			out[pid] = cpuTime(&proc{cmd: &exec.Cmd{Process: &os.Process{Pid: pid}}})
		}
	}
	return out
}

// notePG records the PostgreSQL CPU a request of phase, from the
// backends' CPU before it (a backend that left meanwhile is not counted).
func (t *target) notePG(phase string, before map[int]time.Duration, requests int) {
	if before == nil {
		return
	}
	var d time.Duration
	for pid, c := range t.pgBackends() {
		d += c - before[pid]
	}
	t.pgCPU[phase] = fmt.Sprintf("%.0f", float64(d.Microseconds())/float64(max(1, requests)))
}

// seed creates one account with n beets in one transaction and returns
// their tokens and a connection for the loss checks.
func seed(dbURL string, n int) ([]string, *sql.DB) {
	ctx := context.Background()
	st, err := sqlstore.Open(ctx, dbURL, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	now := time.Now()
	a := &beet.Account{Plan: beet.PlanPro, CreatedAt: now}
	if err := st.CreateAccount(ctx, a, &beet.User{Email: "bench@example.com", PasswordHash: "-", CreatedAt: now}); err != nil {
		log.Fatal(err)
	}
	st.Close()
	db := benchkit.OpenDB(dbURL, "_pragma=busy_timeout(10000)")
	// With -deadlines every beet is up with a deadline an hour away, as a
	// watched beet in production is, so each event moves an indexed
	// deadline (PostgreSQL: the HOT update through wake_at, pgperf2). A
	// learned auto model would do the same but not quietly: one learned at
	// the benchmark's rhythm flags 20 s of silence (the beets only the
	// burst pings go down between phases), one learned slower flags the
	// benchmark's rate as a surge. A period of an hour flips nothing.
	det, _ := json.Marshal(beet.Detection{Mode: beet.ModeAuto})
	status, last, due := "new", any(nil), any(nil)
	if *deadlines {
		det, _ = json.Marshal(beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600, GraceSeconds: 300})
		status, last, due = "up", now.UnixMicro(), now.Add(65*time.Minute).UnixMicro()
	}
	toks := make([]string, n)
	tx, err := db.Begin()
	if err != nil {
		log.Fatal(err)
	}
	us := now.UnixMicro()
	const chunk = 500
	for i := 0; i < n; i += chunk {
		var q strings.Builder
		q.WriteString(`INSERT INTO beets (account_id, name, token, status, status_since, timezone, detection, created_at, updated_at, last_event_at, due_at) VALUES `)
		var args []any
		for j := i; j < min(n, i+chunk); j++ {
			toks[j] = beet.NewToken()
			if j > i {
				q.WriteByte(',')
			}
			k := len(args)
			fmt.Fprintf(&q, "($%d,$%d,$%d,$%d,$%d,'UTC',$%d,$%d,$%d,$%d,$%d)", k+1, k+2, k+3, k+4, k+5, k+6, k+7, k+8, k+9, k+10)
			args = append(args, a.ID, "bench "+strconv.Itoa(j), toks[j], status, us, string(det), us, us, last, due)
		}
		if _, err := tx.Exec(q.String(), args...); err != nil {
			log.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}
	return toks, db
}

func randomTokens(n int) []string {
	toks := make([]string, n)
	for i := range toks {
		toks[i] = beet.NewToken()
	}
	return toks
}

type result struct {
	n             int
	rps           float64
	elapsed       time.Duration
	p50, p99, max time.Duration
	errors        int64
}

func newClient(n int, keepAlive bool) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConnsPerHost: n, MaxConnsPerHost: n, DisableCompression: true, DisableKeepAlives: !keepAlive,
		DialContext: (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
	}}
}

// beaconer sends GET beacons to one target on at most n connections at
// once, kept alive or each used once.
type beaconer interface {
	// beacon sends one beacon whose User-Agent names it, and records the
	// name if it got its 200.
	beacon(tok, ua string) bool
	// close closes the connections kept alive; call it once no beacon
	// is under way.
	close()
}

// beaconer returns the -client kind of beaconer for t.
func (t *target) beaconer(n int, keepAlive bool) beaconer {
	if *clientKind == "nethttp" {
		return &httpBeaconer{t: t, c: newClient(n, keepAlive)}
	}
	slots := make(chan *rawConn, n)
	for range n {
		slots <- nil
	}
	return &rawBeaconer{t: t, host: strings.TrimPrefix(t.proc.url, "http://"), keepAlive: keepAlive, slots: slots}
}

// httpBeaconer sends through net/http's Client: a Transport with its
// connection pool and two goroutines a connection.
type httpBeaconer struct {
	t *target
	c *http.Client
}

func (h *httpBeaconer) close() { h.c.CloseIdleConnections() }

func (h *httpBeaconer) beacon(tok, ua string) bool {
	req, _ := http.NewRequest(http.MethodGet, h.t.proc.url+"/api/v1/beet/"+tok, nil)
	req.Header.Set("User-Agent", ua)
	res, err := h.c.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return h.t.ack(ua, res.StatusCode)
}

// rawBeaconer writes each request by hand on a plain TCP connection and
// reads the answer with http.ReadResponse: the same bytes on the wire as
// net/http's client sends for a GET, for a fraction of its CPU, which the
// load generator otherwise takes from the servers it measures on a small
// machine. A slot holds a connection (nil until dialled); a request waits
// for a free slot, as net/http's MaxConnsPerHost makes it wait.
type rawBeaconer struct {
	t         *target
	host      string
	keepAlive bool
	slots     chan *rawConn
}

type rawConn struct {
	c   net.Conn
	br  *bufio.Reader
	req []byte
}

func (r *rawBeaconer) close() {
	for range cap(r.slots) {
		if rc := <-r.slots; rc != nil {
			rc.c.Close()
		}
	}
}

func (r *rawBeaconer) beacon(tok, ua string) bool {
	rc := <-r.slots
	status, reuse, err := r.roundTrip(&rc, tok, ua)
	if rc != nil && (err != nil || !reuse) {
		rc.c.Close()
		rc = nil
	}
	r.slots <- rc
	return err == nil && r.t.ack(ua, status)
}

// roundTrip sends one beacon on *rcp, dialling it first if it is nil, and
// returns the answer's status and whether the connection can take another
// request.
func (r *rawBeaconer) roundTrip(rcp **rawConn, tok, ua string) (status int, reuse bool, err error) {
	rc := *rcp
	if rc == nil {
		c, err := net.DialTimeout("tcp", r.host, 30*time.Second)
		if err != nil {
			return 0, false, err
		}
		rc = &rawConn{c: c, br: bufio.NewReaderSize(c, 1024)}
		*rcp = rc
	}
	b := append(rc.req[:0], "GET /api/v1/beet/"...)
	b = append(b, tok...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, r.host...)
	b = append(b, "\r\nUser-Agent: "...)
	b = append(b, ua...)
	if !r.keepAlive {
		b = append(b, "\r\nConnection: close"...)
	}
	b = append(b, "\r\n\r\n"...)
	rc.req = b
	rc.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := rc.c.Write(b); err != nil {
		return 0, false, err
	}
	res, err := http.ReadResponse(rc.br, nil)
	if err != nil {
		return 0, false, err
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, r.keepAlive && !res.Close, err
}

// ack records ua as acknowledged if status is 200, and says whether it was.
func (t *target) ack(ua string, status int) bool {
	if status != 200 {
		return false
	}
	if t.db != nil || t.log != "" {
		t.mu.Lock()
		if t.acked == nil {
			t.acked = map[string]bool{}
		}
		t.acked[ua] = true
		t.mu.Unlock()
	}
	return true
}

// checkLoss compares the requests that got a 200 since the last check with
// the events in the database, and forgets them.
func (t *target) checkLoss() string {
	if t.db == nil && t.log == "" {
		return "-"
	}
	t.mu.Lock()
	acked := t.acked
	t.acked = nil
	t.mu.Unlock()
	if t.log != "" {
		return strconv.Itoa(lostFromLog(t.log, acked))
	}
	// With BEET_INGEST_ACK=journal an answered event reaches the database
	// after its answer: the check waits up to 30 s for the last ones, and
	// says how long it waited.
	start := time.Now()
	passes := 0
	for {
		t.dropStored(acked)
		passes++
		if len(acked) == 0 || time.Since(start) > 30*time.Second {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(acked) == 0 && passes > 1 {
		return fmt.Sprintf("0 (all in %.1f s)", time.Since(start).Seconds())
	}
	return strconv.Itoa(len(acked))
}

// dropStored forgets the acknowledged User-Agents the database holds.
func (t *target) dropStored(acked map[string]bool) {
	rows, err := t.db.Query(`SELECT user_agent FROM events`)
	if err != nil {
		log.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var ua string
		if err := rows.Scan(&ua); err != nil {
			log.Fatal(err)
		}
		delete(acked, ua)
	}
	if err := rows.Err(); err != nil {
		log.Fatal(err)
	}
}

// lostFromLog counts the acknowledged User-Agents that the durable floor's
// log does not hold (each line: time, path, User-Agent).
func lostFromLog(file string, acked map[string]bool) int {
	f, err := os.Open(file)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if _, rest, ok := strings.Cut(sc.Text(), " "); ok {
			if _, ua, ok := strings.Cut(rest, " "); ok {
				delete(acked, ua)
			}
		}
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
	return len(acked)
}

// warmUp sends every token its first event, unmeasured: a beet's first
// event flips it (new → learning) once in its life.
func warmUp(url string, toks []string) {
	client := newClient(*conns, true)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range *conns {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(toks); i = int(next.Add(1)) - 1 {
				res, err := client.Get(url + "/api/v1/beet/" + toks[i] + "?warm")
				if err == nil {
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
			}
		})
	}
	wg.Wait()
}

var runSeq, logSeq atomic.Int64

// closedLoop keeps -conns requests in flight for -duration.
func closedLoop(t *target, phase string, toks []string) result {
	client := t.beaconer(*conns, true)
	defer client.close()
	run := phase + strconv.FormatInt(runSeq.Add(1), 10)
	deadline := time.Now().Add(*duration)
	var next atomic.Int64
	var errs atomic.Int64
	lat := make([][]time.Duration, *conns)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range *conns {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				i := int(next.Add(1))
				t0 := time.Now()
				if !client.beacon(toks[i%len(toks)], "bench "+run+" "+strconv.Itoa(i)) {
					errs.Add(1)
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	return summarise(slices.Concat(lat...), time.Since(start), errs.Load())
}

// openLoop sends rate requests/s on a schedule, whatever the answers do,
// and measures each latency from the time the request was due.
func openLoop(t *target, phase string, toks []string, rate int, d time.Duration) result {
	client := t.beaconer(*conns, true)
	defer client.close()
	run := phase + strconv.FormatInt(runSeq.Add(1), 10)
	total := int(float64(rate) * d.Seconds())
	interval := time.Second / time.Duration(rate)
	lat := make([]time.Duration, total)
	var errs atomic.Int64
	jobs := make(chan int, total)
	start := time.Now()
	var wg sync.WaitGroup
	for range *conns * 4 {
		wg.Go(func() {
			for i := range jobs {
				due := start.Add(time.Duration(i) * interval)
				if w := time.Until(due); w > 0 {
					time.Sleep(w)
				}
				if !client.beacon(toks[i%len(toks)], "bench "+run+" "+strconv.Itoa(i)) {
					errs.Add(1)
				}
				lat[i] = time.Since(due)
			}
		})
	}
	for i := range total {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return summarise(lat, time.Since(start), errs.Load())
}

// ladderStep is where one server's ladder ended: the highest rate it held
// and the first it did not, with their runs.
type ladderStep struct {
	best, next       int
	bestRes, nextRes ladderRuns
	done             bool
}

// ladderRuns are a server's runs at one rate.
type ladderRuns []result

// held reports whether the rate held: the median p99 under -p99, no
// errors, and the median run achieving 95% of the rate. The median of an
// odd number of runs (not the best run) is what the ladder goes by, so
// one stall of the shared machine neither fails a server nor saves one.
func (rs ladderRuns) held(rate int) bool {
	var p99 []time.Duration
	var rps []float64
	for _, r := range rs {
		if r.errors > 0 {
			return false
		}
		p99, rps = append(p99, r.p99), append(rps, r.rps)
	}
	return median(p99) < *maxP99 && median(rps) >= 0.95*float64(rate)
}

func (rs ladderRuns) String() string {
	if len(rs) == 0 {
		return "-"
	}
	return p99s(rs)
}

// p99s is the median p99 of the runs and, in brackets, each run's.
func p99s(rs []result) string {
	var all []time.Duration
	var each []string
	for _, r := range rs {
		all = append(all, r.p99)
		each = append(each, fmt.Sprintf("%.1f", float64(r.p99)/float64(time.Millisecond)))
	}
	return fmt.Sprintf("%s (%s)", ms(median(all)), strings.Join(each, ", "))
}

func median[T cmp.Ordered](v []T) T {
	var zero T
	if len(v) == 0 {
		return zero
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

// ladder raises the open-loop rate for every server at once. At each rate
// every server still climbing runs -repeat times, the servers taking turns
// run by run (the order rotates each round, so none always runs first or
// right after another's load), and the rate holds for a server if its
// median run held (ladderRuns.held). A server stops at its first rate that
// does not hold. Taking turns at one rate, minutes apart at most, is what
// makes the ratio to the bare server fair on a machine whose speed drifts:
// each rate meets every server under the same conditions.
func ladder(targets []*target) []ladderStep {
	steps := make([]ladderStep, len(targets))
	for r := *ladderFrom; r <= 60000; r = max(r*(100+*ladderGrowth)/100/250*250, r+250) {
		var climbing []int
		for i := range targets {
			if !steps[i].done {
				climbing = append(climbing, i)
			}
		}
		if len(climbing) == 0 {
			break
		}
		runs := make([]ladderRuns, len(targets))
		sub := make([]*target, len(climbing))
		for k, i := range climbing {
			sub[k] = targets[i]
		}
		interleave(sub, *repeat, func(k int, t *target) {
			runs[climbing[k]] = append(runs[climbing[k]], openLoop(t, "ladder", t.toks[:*tokens], r, *step))
			time.Sleep(500 * time.Millisecond) // let the writer's queue drain
		})
		for _, i := range climbing {
			if runs[i].held(r) {
				steps[i].best, steps[i].bestRes = r, runs[i]
			} else {
				steps[i].next, steps[i].nextRes, steps[i].done = r, runs[i], true
			}
		}
	}
	return steps
}

// interleave runs fn n times for each target, one target after the other,
// the order rotating by one each round.
func interleave(targets []*target, n int, fn func(i int, t *target)) {
	for round := range n {
		for k := range targets {
			i := (k + round) % len(targets)
			fn(i, targets[i])
		}
	}
}

// burst pings each token once, every request on a connection of its own,
// burstC dialling at once, all due at the start: latency counts from then
// for the ones that wait for a slot, as it would for cron jobs that fire at
// the same second.
func burst(t *target, toks []string) result {
	client := t.beaconer(*burstC, false)
	defer client.close()
	run := "burst" + strconv.FormatInt(runSeq.Add(1), 10)
	lat := make([]time.Duration, len(toks))
	var errs atomic.Int64
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range *burstC {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(toks); i = int(next.Add(1)) - 1 {
				t0 := time.Now()
				if !client.beacon(toks[i], "bench "+run+" "+strconv.Itoa(i)) {
					errs.Add(1)
				}
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	return summarise(lat, time.Since(start), errs.Load())
}

func summarise(lat []time.Duration, elapsed time.Duration, errs int64) result {
	slices.Sort(lat)
	if len(lat) == 0 {
		return result{errors: errs}
	}
	q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	return result{n: len(lat), rps: float64(len(lat)) / elapsed.Seconds(), elapsed: elapsed, p50: q(0.50), p99: q(0.99), max: lat[len(lat)-1], errors: errs}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// metrics are the counters of a Beet server's /metrics that the report
// uses; the bare server has none.
type metrics map[string]float64

var metricNames = []string{"beet_ingest_commits_total", "beet_ingest_events_committed_total", "beet_ingest_commit_seconds_total",
	"beet_ingest_detect_seconds_total", "beet_ingest_detect_beets_total", "go_memstats_mallocs_total",
	`beet_ingest_commit_seconds_bucket{result="ok",le="0.005"}`, `beet_ingest_commit_seconds_count{result="ok"}`}

func (t *target) metrics() metrics {
	if t.db == nil {
		return nil
	}
	res, err := http.Get(t.proc.metricsURL())
	if err != nil {
		log.Fatal(err)
	}
	defer res.Body.Close()
	m := metrics{}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if ok && slices.Contains(metricNames, name) {
			m[name], _ = strconv.ParseFloat(v, 64)
		}
	}
	return m
}

func (m metrics) minus(o metrics) metrics {
	if m == nil {
		return nil
	}
	out := metrics{}
	for k, v := range m {
		out[k] = v - o[k]
	}
	return out
}

func (m metrics) plus(o metrics) metrics {
	if o == nil {
		return m
	}
	out := metrics{}
	for k, v := range o {
		out[k] = m[k] + v
	}
	return out
}

func (m metrics) perCommit() float64 {
	return m["beet_ingest_events_committed_total"] / max(1, m["beet_ingest_commits_total"])
}

func (m metrics) commitMicros() float64 {
	return 1e6 * m["beet_ingest_commit_seconds_total"] / max(1, m["beet_ingest_commits_total"])
}

// slowCommits is how many commits took over 5 ms, and their share.
func (m metrics) slowCommits() string {
	all := m[`beet_ingest_commit_seconds_count{result="ok"}`]
	if all == 0 {
		return "-"
	}
	slow := all - m[`beet_ingest_commit_seconds_bucket{result="ok",le="0.005"}`]
	return fmt.Sprintf("%.0f (%.1f%%)", slow, 100*slow/all)
}

// busy is the share of elapsed that the writer spent in commits (with
// several PostgreSQL lanes, their sum: it can pass 100%).
func (m metrics) busy(elapsed time.Duration) string {
	if m == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*m["beet_ingest_commit_seconds_total"]/elapsed.Seconds())
}

// row is the writer's part of a report row: commits, events per commit,
// mean commit time, detection time per beet applied, allocations per request.
func (m metrics) row(requests int) string {
	if m == nil {
		return "- | - | - | - | -"
	}
	return fmt.Sprintf("%.0f | %.1f | %.0f | %.2f | %.0f", m["beet_ingest_commits_total"], m.perCommit(), m.commitMicros(),
		1e6*m["beet_ingest_detect_seconds_total"]/max(1, m["beet_ingest_detect_beets_total"]),
		m["go_memstats_mallocs_total"]/float64(max(1, requests)))
}

// startProfile takes a CPU profile of d and, when stopped, a delta
// allocation profile over the same phase, into -profile.
func (t *target) startProfile(phase string, d time.Duration) (stop func()) {
	debug := ""
	if *profile != "" && t.db != nil {
		debug = t.proc.debugURL()
	}
	if debug == "" {
		return func() {}
	}
	base := filepath.Join(*profile, strings.NewReplacer(", ", "-", " ", "-").Replace(strings.ToLower(t.name))+"-"+phase)
	var wg sync.WaitGroup
	fetch := func(path, file string) {
		res, err := http.Get(debug + path)
		if err != nil {
			log.Printf("profile %s: %v", file, err)
			return
		}
		defer res.Body.Close()
		f, err := os.Create(file)
		if err != nil {
			log.Fatal(err)
		}
		io.Copy(f, res.Body)
		f.Close()
	}
	secs := strconv.Itoa(max(1, int(d.Seconds())))
	wg.Go(func() { fetch("/debug/pprof/profile?seconds="+secs, base+".cpu.pprof") })
	wg.Go(func() { fetch("/debug/pprof/allocs?seconds="+secs, base+".allocs.pprof") })
	if *traceFor > 0 {
		wg.Go(func() {
			fetch("/debug/pprof/trace?seconds="+strconv.Itoa(max(1, int(traceFor.Seconds()))), base+".trace")
		})
	}
	return wg.Wait
}

// floodRun sends n random well-formed tokens, each once, and returns the
// server's peak RSS in KiB.
func floodRun(p *proc, n int) int64 {
	toks := make(chan string, 1024)
	go func() {
		for range n {
			toks <- beet.NewToken()
		}
		close(toks)
	}()
	client := newClient(*conns, true)
	var wg sync.WaitGroup
	for range *conns {
		wg.Go(func() {
			for t := range toks {
				res, err := client.Get(p.url + "/api/v1/beet/" + t)
				if err == nil {
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
			}
		})
	}
	wg.Wait()
	return benchkit.HWM(p.cmd.Process.Pid)
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime(p *proc) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command: state is field 3, utime 14, stime 15.
	_, rest, _ := strings.Cut(string(b), ") ")
	fs := strings.Fields(rest)
	if len(fs) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(fs[11], 10, 64)
	s, _ := strconv.ParseInt(fs[12], 10, 64)
	return time.Duration(u+s) * time.Second / 100 // USER_HZ
}

// stallMeter measures how late a 1 ms sleep on an OS thread of its own
// wakes up: a machine that stalls the load generator for 100 ms stalls
// the servers too, and a p99 taken across such a stall says more about the
// machine than about any server. Each phase's report names its longest
// stall and the time lost in stalls over 20 ms.
type stallMeter struct {
	mu      sync.Mutex
	longest time.Duration
	lost    time.Duration
	count   int
	cpu     cpuTimes // /proc/stat at the last take
}

func startStallMeter() *stallMeter {
	m := &stallMeter{cpu: readCPUTimes()}
	go func() {
		runtime.LockOSThread()
		for {
			t := time.Now()
			time.Sleep(time.Millisecond)
			late := time.Since(t) - time.Millisecond
			m.mu.Lock()
			m.longest = max(m.longest, late)
			if late > 20*time.Millisecond {
				m.lost += late
				m.count++
			}
			m.mu.Unlock()
		}
	}()
	return m
}

// take reports the stalls since the last take and starts over.
func (m *stallMeter) take() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := readCPUTimes()
	steal := "unknown"
	if d := now.total - m.cpu.total; d > 0 {
		steal = fmt.Sprintf("%.1f%%", 100*float64(now.steal-m.cpu.steal)/float64(d))
	}
	s := fmt.Sprintf("Stalls during this phase: a 1 ms sleep woke up to %s late; %d stalls over 20 ms, %s in all. CPU time stolen by the host (/proc/stat): %s.",
		ms(m.longest), m.count, ms(m.lost), steal)
	m.longest, m.lost, m.count, m.cpu = 0, 0, 0, now
	return s
}

// cpuTimes are the machine's CPU time and the part of it the hypervisor
// gave to other guests (steal), in clock ticks.
type cpuTimes struct{ total, steal int64 }

// readCPUTimes reads the first line of /proc/stat (zero where there is none).
func readCPUTimes() cpuTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTimes{}
	}
	var c cpuTimes
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		if i < 8 { // user … steal; guest time is counted in user already
			c.total += n
		}
		if i == 7 {
			c.steal = n
		}
	}
	return c
}

// pgRoute is one way to reach the PostgreSQL server, and how a Beet's
// name says it.
type pgRoute struct{ name, url string }

// pgRoutes are the ways each Beet on PostgreSQL runs: over base alone,
// or, given the server's socket directory, over TCP and over the socket
// (the same server, user and database; pgx takes a host that is a path
// as a Unix socket directory).
func pgRoutes(base, socketDir string) []pgRoute {
	if socketDir == "" {
		return []pgRoute{{"", base}}
	}
	u, err := url.Parse(base)
	if err != nil {
		log.Fatalf("-postgres: %v", err)
	}
	q := u.Query()
	q.Set("host", socketDir)
	socket := *u
	socket.Host = ""
	socket.RawQuery = q.Encode()
	return []pgRoute{{" (TCP)", base}, {" (Unix socket)", socket.String()}}
}

// settingSets is the Beets to run on one engine, one set of KEY=VALUE
// settings each: env's ';'-separated sets, else one set a value of the
// shorthand list (key=value for each comma-separated value), else one Beet
// with the defaults (a nil set).
func settingSets(env, key, shorthand string) [][]string {
	var sets [][]string
	for _, set := range strings.Split(env, ";") {
		if f := strings.Fields(set); len(f) > 0 {
			sets = append(sets, f)
		}
	}
	if len(sets) == 0 {
		for _, v := range strings.Split(shorthand, ",") {
			if v = strings.TrimSpace(v); v != "" {
				sets = append(sets, []string{key + "=" + v})
			}
		}
	}
	if len(sets) == 0 {
		sets = [][]string{nil}
	}
	return sets
}
