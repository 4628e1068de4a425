// Command ingest is Beet's ingestion load benchmark. In one run, side by
// side on the same machine, it measures:
//
//  1. a bare net/http server answering the same GIF (the ceiling),
//  2. Beet on SQLite, and
//  3. Beet on PostgreSQL (when -postgres or BEET_TEST_POSTGRES_URL is set),
//
// each as its own process, under a closed loop of -conns connections
// sending GET beacons round-robin over -tokens beet tokens; then Beet on
// SQLite at a steady -rate requests/s (open loop: latency is measured from
// when each request was due, so a stall is not hidden); then a flood of
// -flood random, well-formed tokens against Beet on SQLite while its peak
// RSS is sampled. It prints a Markdown report.
//
//	go run ./bench/ingest                       # the full run (about 2 minutes)
//	go run ./bench/ingest -duration 5s -flood 100000
package main

import (
	"bufio"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
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
	"github.com/beethq/beet/internal/sqlstore"
)

var (
	duration = flag.Duration("duration", 10*time.Second, "length of each closed-loop run")
	conns    = flag.Int("conns", 64, "concurrent connections")
	tokens   = flag.Int("tokens", 10000, "beets, hit round-robin")
	rate     = flag.Int("rate", 5000, "requests/s of the steady run on SQLite")
	flood    = flag.Int("flood", 1_000_000, "random tokens sent in the flood run (0 skips it)")
	pgURL    = flag.String("postgres", os.Getenv("BEET_TEST_POSTGRES_URL"), "PostgreSQL server for the PostgreSQL run (empty skips it)")
)

func main() {
	flag.Parse()
	log.SetFlags(0)
	dir, err := os.MkdirTemp("", "beet-bench-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	beetBin := build(dir, "beet", "./cmd/beet")
	bareBin := build(dir, "bare", "./bench/bare")

	fmt.Printf("## Ingestion load (%s)\n\n", time.Now().UTC().Format("2006-01-02"))
	fmt.Printf("%d CPUs shared by servers and load generator; %d connections; %d tokens round-robin; %s per run; GET beacons; every beet has had its first event before Beet is measured.\n\n",
		runtime.NumCPU(), *conns, *tokens, *duration)
	fmt.Println("| server | req/s | p50 | p99 | errors | ratio to bare |")
	fmt.Println("|---|---|---|---|---|---|")

	bare := startProc(bareBin, nil, regexp.MustCompile(`^(http://\S+)$`))
	bareRes := closedLoop(bare.url, repeatTokens(*tokens))
	bare.stop()
	row("bare net/http", bareRes, bareRes)

	sqliteURL := "sqlite://" + filepath.Join(dir, "beet.db")
	toks := seed(sqliteURL, *tokens)
	srv := startBeet(beetBin, sqliteURL, dir)
	warmUp(srv.url, toks)
	sqliteRes := closedLoop(srv.url, toks)
	row("Beet, SQLite", sqliteRes, bareRes)
	steady := openLoop(srv.url, toks, *rate, *duration)
	srv.stop()

	if *pgURL != "" {
		schemaURL, drop := pgSchema(*pgURL)
		ptoks := seed(schemaURL, *tokens)
		psrv := startBeet(beetBin, schemaURL, dir)
		warmUp(psrv.url, ptoks)
		pgRes := closedLoop(psrv.url, ptoks)
		psrv.stop()
		drop()
		row("Beet, PostgreSQL", pgRes, bareRes)
	} else {
		fmt.Println("| Beet, PostgreSQL | skipped: no -postgres URL | | | | |")
	}

	fmt.Printf("\nSteady %d req/s on SQLite (open loop, %s): achieved %.0f req/s, p50 %s, p99 %s, max %s, errors %d.\n",
		*rate, *duration, steady.rps, ms(steady.p50), ms(steady.p99), ms(steady.max), steady.errors)

	if *flood > 0 {
		fsrv := startBeet(beetBin, "sqlite://"+filepath.Join(dir, "flood.db"), dir)
		base := rss(fsrv.cmd.Process.Pid)
		peak := floodRun(fsrv, *flood)
		fsrv.stop()
		fmt.Printf("\nFlood: %d random well-formed tokens (unknown to Beet) against Beet on SQLite: RSS %.0f MiB before, peak %.0f MiB.\n",
			*flood, float64(base)/1024, float64(peak)/1024)
	}
}

func build(dir, name, pkg string) string {
	bin := filepath.Join(dir, name)
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		log.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

type proc struct {
	cmd *exec.Cmd
	url string
}

func (p *proc) stop() {
	p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		p.cmd.Process.Kill()
	}
}

// startProc runs bin and waits for a line matching re (its URL) on stdout
// or stderr.
func startProc(bin string, args []string, re *regexp.Regexp, env ...string) *proc {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case u := <-found:
		return &proc{cmd: cmd, url: u}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		log.Fatalf("%s did not start", bin)
	}
	return nil
}

func startBeet(bin, dbURL, dir string) *proc {
	return startProc(bin, []string{"serve", "--listen", "127.0.0.1:0", "--cleanup-interval", "0"},
		regexp.MustCompile(`msg=listening .*\surl=(http://\S+)`),
		"BEET_DATABASE_URL="+dbURL, "BEET_SPOOL_PATH="+filepath.Join(dir, strconv.FormatInt(time.Now().UnixNano(), 36)+".spool"),
		"BEET_LOG_LEVEL=info")
}

// seed creates one account with n beets and returns their tokens.
func seed(dbURL string, n int) []string {
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, dbURL, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	now := time.Now()
	a := &beet.Account{Plan: beet.PlanPro, CreatedAt: now}
	if err := db.CreateAccount(ctx, a, &beet.User{Email: "bench@example.com", PasswordHash: "-", CreatedAt: now}); err != nil {
		log.Fatal(err)
	}
	toks := make([]string, n)
	for i := range toks {
		b := &beet.Beet{AccountID: a.ID, Name: "bench " + strconv.Itoa(i), Token: beet.NewToken(), Status: beet.StatusNew,
			Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}, CreatedAt: now, UpdatedAt: now}
		if err := db.CreateBeet(ctx, b); err != nil {
			log.Fatal(err)
		}
		toks[i] = b.Token
	}
	return toks
}

func pgSchema(base string) (string, func()) {
	admin, err := sql.Open("pgx", base)
	if err != nil {
		log.Fatal(err)
	}
	schema := "beet_bench_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		log.Fatal(err)
	}
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema, func() {
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	}
}

func repeatTokens(n int) []string {
	toks := make([]string, n)
	for i := range toks {
		toks[i] = beet.NewToken()
	}
	return toks
}

type result struct {
	rps           float64
	p50, p99, max time.Duration
	errors        int64
}

func newClient() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		MaxIdleConnsPerHost: *conns, MaxConnsPerHost: *conns, DisableCompression: true,
	}}
}

// warmUp sends every token its first event, unmeasured: a beet's first
// event flips it (new → learning) once in its life, and 10,000 of them in
// the first seconds would measure a one-off, not the steady state.
func warmUp(url string, toks []string) {
	client := newClient()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range *conns {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(toks); i = int(next.Add(1)) - 1 {
				get(client, url+"/api/v1/beet/"+toks[i])
			}
		})
	}
	wg.Wait()
}

// closedLoop keeps -conns requests in flight for -duration.
func closedLoop(url string, toks []string) result {
	client := newClient()
	deadline := time.Now().Add(*duration)
	var next atomic.Int64
	var errs atomic.Int64
	lat := make([][]time.Duration, *conns)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range *conns {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				tok := toks[int(next.Add(1))%len(toks)]
				t0 := time.Now()
				if !get(client, url+"/api/v1/beet/"+tok) {
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
func openLoop(url string, toks []string, rate int, d time.Duration) result {
	client := newClient()
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
				if !get(client, url+"/api/v1/beet/"+toks[i%len(toks)]) {
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

func get(c *http.Client, u string) bool {
	res, err := c.Get(u)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode == 200
}

func summarise(lat []time.Duration, elapsed time.Duration, errs int64) result {
	slices.Sort(lat)
	if len(lat) == 0 {
		return result{errors: errs}
	}
	q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	return result{rps: float64(len(lat)) / elapsed.Seconds(), p50: q(0.50), p99: q(0.99), max: lat[len(lat)-1], errors: errs}
}

func row(name string, r, bare result) {
	fmt.Printf("| %s | %.0f | %s | %s | %d | %.2f |\n", name, r.rps, ms(r.p50), ms(r.p99), r.errors, r.rps/bare.rps)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

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
	client := newClient()
	var wg sync.WaitGroup
	for range *conns {
		wg.Go(func() {
			for t := range toks {
				get(client, p.url+"/api/v1/beet/"+t)
			}
		})
	}
	wg.Wait()
	return hwm(p.cmd.Process.Pid)
}

// rss and hwm read the process's current and peak resident set (KiB).
func rss(pid int) int64 { return procStatus(pid, "VmRSS:") }
func hwm(pid int) int64 { return procStatus(pid, "VmHWM:") }

func procStatus(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
