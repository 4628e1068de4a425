// Command soak runs Beet (the built binary, SQLite) under mixed load for a
// while and reports whether memory, goroutines and open files stay flat
// and whether every acknowledged event is in the database at the end.
//
//	go run ./bench/soak -duration 10m
//
// Ingestion is an open loop: a pacer releases requests on schedule (rate ×
// elapsed time, checked every 5 ms, so a late tick catches up) to up to
// -senders requests in flight on kept-alive connections. A request that
// finds every sender busy is counted as not sent, so the report tells a
// saturated driver (not sent > 0, low server CPU) from a saturated server
// (latency up, driver CPU low). The driver's and the server's CPU seconds
// are reported side by side; -cpuprofile writes the driver's profile.
//
// Load: ingestion at -rate requests/s spread over -beets beets; API reads
// and writes (lists, events, PATCH); a token rotation every 2 s on a pool
// of beets of their own; a webhook channel to a loopback receiver that
// fails 20% of the time, fed by test messages and by beets in period mode
// that go quiet and come back; clean-up every minute; detection as serve
// runs it. All traffic stays on 127.0.0.1.
package main

import (
	"bufio"
	"context"
	crand "crypto/rand"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/bench/benchkit"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/sqlstore"
)

func main() {
	duration := flag.Duration("duration", 10*time.Minute, "how long the load runs")
	nBeets := flag.Int("beets", 10000, "beets that receive ingestion")
	rate := flag.Int("rate", 1000, "ingestion requests per second")
	senders := flag.Int("senders", 1024, "most ingestion requests in flight (each on a kept-alive connection)")
	sampleEvery := flag.Duration("sample", 30*time.Second, "how often RSS, goroutines and open files are sampled")
	cpuprofile := flag.String("cpuprofile", "", "write the driver's CPU profile here (is the driver the bottleneck?)")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}

	dir, err := os.MkdirTemp("", "beet-soak")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := benchkit.Build(dir, "beet", "./cmd/beet")
	dbURL := "sqlite://" + filepath.Join(dir, "soak.db")
	key, tokens, rotating, periodic := seed(dbURL, *nBeets)

	var hookTotal, hookFailed atomic.Int64
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		hookTotal.Add(1)
		if rand.IntN(5) == 0 {
			hookFailed.Add(1)
			http.Error(w, "flaky receiver", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer recv.Close()

	// /metrics on the public listener, behind a token of the run's own.
	metricsToken := beet.NewToken()
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--cleanup-interval", "1m")
	cmd.Env = append(os.Environ(), "BEET_DATABASE_URL="+dbURL, "BEET_SPOOL_PATH="+filepath.Join(dir, "soak.spool"),
		"BEET_ALLOW_PRIVATE_TARGETS=true", "BEET_LOG_LEVEL=info", "BEET_METRICS_LISTEN=off", "BEET_METRICS_TOKEN="+metricsToken,
		"BEET_SECRET_KEY="+secretKey()) // the channel's secret sealed at rest, opened for every post
	base := start(cmd)
	pid := cmd.Process.Pid
	// Enough kept-alive connections for every sender: a request that
	// found none idle would dial (and the server accept) anew.
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: *senders + 64, MaxIdleConnsPerHost: *senders + 64, IdleConnTimeout: time.Minute, DisableCompression: true}}
	api := func(method, path, body string) (int, []byte) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := client.Do(req)
		if err != nil {
			return 0, nil
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	st, body := api("POST", "/api/v1/channels", `{"kind": "webhook", "name": "soak", "config": {"url": "`+recv.URL+`/hook", "secret": "soak-secret-value"}}`)
	var ch struct{ ID int64 }
	if json.Unmarshal(body, &ch); st != 201 {
		log.Fatalf("channel: %d %s", st, body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	defer cancel()
	var wg sync.WaitGroup
	acked := make([]atomic.Int64, len(tokens))
	var sent, ok200, limited, failed, apiCalls, apiErrors, rotations atomic.Int64

	// Ingestion: an open loop at the rate. The pacer releases what is due
	// by now (rate × elapsed) every 5 ms; a sender takes each request and
	// measures its latency from when it was due.
	type job struct {
		beet int
		due  time.Time
	}
	jobs := make(chan job, *senders)
	var notSent, inFlight atomic.Int64
	lat := newLatencies()
	for range *senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				sent.Add(1)
				inFlight.Add(1)
				res, err := client.Get(base + "/api/v1/beet/" + tokens[j.beet])
				if err != nil {
					inFlight.Add(-1)
					failed.Add(1)
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				inFlight.Add(-1)
				lat.add(time.Since(j.due))
				switch res.StatusCode {
				case 200:
					ok200.Add(1)
					acked[j.beet].Add(1)
				case 429:
					limited.Add(1)
				default:
					failed.Add(1)
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(jobs)
		start := time.Now()
		interval := time.Second / time.Duration(*rate)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for released := int64(0); ; {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				for due := int64(now.Sub(start) / interval); released < due; released++ {
					select {
					case jobs <- job{rand.IntN(len(tokens)), start.Add(time.Duration(released) * interval)}:
					default: // every sender busy: the driver is the limit
						notSent.Add(1)
					}
				}
			}
		}
	}()
	// API reads and writes, rotations, test messages, periodic beets.
	every := func(d time.Duration, fn func(n int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(d)
			defer t.Stop()
			for n := 0; ; n++ {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					fn(n)
				}
			}
		}()
	}
	call := func(method, path, body string) {
		apiCalls.Add(1)
		if st, _ := api(method, path, body); st == 0 || st >= 500 {
			apiErrors.Add(1)
		}
	}
	every(100*time.Millisecond, func(n int) {
		id := strconv.Itoa(1 + rand.IntN(len(tokens)))
		switch n % 4 {
		case 0:
			call("GET", "/api/v1/beets?limit=50&offset="+strconv.Itoa(rand.IntN(len(tokens))), "")
		case 1:
			call("GET", "/api/v1/beets/"+id+"/events?limit=20", "")
		case 2:
			call("PATCH", "/api/v1/beets/"+id, `{"description": "soak `+strconv.Itoa(n)+`"}`)
		case 3:
			call("GET", "/api/v1/beets/"+id+"/flips", "")
		}
	})
	every(2*time.Second, func(n int) {
		rotations.Add(1)
		call("POST", "/api/v1/beets/"+strconv.FormatInt(rotating[n%len(rotating)], 10)+"/rotate-token", "")
	})
	every(5*time.Second, func(int) { call("POST", "/api/v1/channels/"+strconv.FormatInt(ch.ID, 10)+"/test", "") })
	// Period beets: fed for 3 minutes, quiet for 3 (they go down and up).
	every(10*time.Second, func(n int) {
		if (n/18)%2 == 1 {
			return
		}
		for _, tok := range periodic {
			if res, err := client.Get(base + "/api/v1/beet/" + tok); err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		}
	})

	// Samples of the server process.
	type sample struct {
		at                        time.Duration
		rssMiB                    float64
		goroutines, fds, requests int64
		inFlight                  int64   // ingestion requests open at the time: each is a connection and a goroutine in the server
		rate                      float64 // ingestion requests/s since the sample before
	}
	var samples []sample
	t0 := time.Now()
	serverCPU0, driverCPU0 := procCPU(pid), benchkit.SelfCPU() // the load's share, without the seeding
	takeSample := func() {
		m := metrics(client, base, metricsToken)
		s := sample{at: time.Since(t0).Round(time.Second), rssMiB: float64(benchkit.RSS(pid)) / 1024,
			goroutines: int64(m["go_goroutines"]), fds: openFiles(pid), requests: sent.Load(), inFlight: inFlight.Load()}
		if n := len(samples); n > 0 {
			if d := (s.at - samples[n-1].at).Seconds(); d > 0 {
				s.rate = float64(s.requests-samples[n-1].requests) / d
			}
		}
		samples = append(samples, s)
	}
	takeSample()
	tick := time.NewTicker(*sampleEvery)
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-tick.C:
			takeSample()
			s := samples[len(samples)-1]
			fmt.Fprintf(os.Stderr, "%6s rss %.0f MiB, goroutines %d, open files %d, in flight %d, sent %d (%.0f/s), not sent %d\n",
				s.at, s.rssMiB, s.goroutines, s.fds, s.inFlight, s.requests, s.rate, notSent.Load())
		}
	}
	loadTime := time.Since(t0)
	wg.Wait()
	serverCPU, driverCPU := procCPU(pid)-serverCPU0, benchkit.SelfCPU()-driverCPU0
	// Idle: the driver hangs up its kept-alive connections, so what the
	// server still holds after a moment is what leaks.
	client.CloseIdleConnections()
	time.Sleep(3 * time.Second)
	takeSample()

	// Every acknowledged event is in the database.
	db, err := sqlstore.Open(context.Background(), dbURL, nil)
	if err != nil {
		log.Fatal(err)
	}
	var missing, stored int64
	for i := range tokens {
		evs, err := db.FindEvents(context.Background(), beet.EventFilter{BeetID: int64(i + 1), Limit: 100000})
		if err != nil {
			log.Fatal(err)
		}
		stored += int64(len(evs))
		if d := acked[i].Load() - int64(len(evs)); d > 0 {
			missing += d
		}
	}
	db.Close()
	benchkit.Stop(cmd)

	elapsed := time.Since(t0)
	fmt.Printf("Soak: %s, %d beets, target %d req/s, up to %d in flight; Beet on SQLite (the built binary)\n\n",
		elapsed.Round(time.Second), len(tokens), *rate, *senders)
	fmt.Printf("| at | RSS (MiB) | goroutines | open files | ingestion requests in flight | sent | req/s since the row before |\n|---|---|---|---|---|---|---|\n")
	for i, s := range samples {
		at, rate := s.at.String(), fmt.Sprintf("%.0f", s.rate)
		if i == len(samples)-1 {
			at, rate = at+" (idle, connections closed)", "-"
		}
		fmt.Printf("| %s | %.0f | %d | %d | %d | %d | %s |\n", at, s.rssMiB, s.goroutines, s.fds, s.inFlight, s.requests, rate)
	}
	p50, p99, pmax := lat.quantiles()
	fmt.Printf("\nIngestion: %d sent (%.0f/s of %d), %d not sent (every sender busy), %d acknowledged (200), %d rate-limited (429), %d failed\n",
		sent.Load(), float64(sent.Load())/loadTime.Seconds(), *rate, notSent.Load(), ok200.Load(), limited.Load(), failed.Load())
	fmt.Printf("Ingestion latency from when each request was due: p50 %s, p99 %s, max %s\n", p50, p99, pmax)
	fmt.Printf("CPU during the load (%s): server %.1f s, this driver %.1f s; %d cores\n", loadTime.Round(time.Second),
		serverCPU.Seconds(), driverCPU.Seconds(), runtime.NumCPU())
	fmt.Printf("API: %d calls, %d failed or 5xx; %d token rotations\n", apiCalls.Load(), apiErrors.Load(), rotations.Load())
	fmt.Printf("Webhook receiver: %d posts, %d answered 500 on purpose\n", hookTotal.Load(), hookFailed.Load())
	fmt.Printf("Events stored for the ingestion beets: %d; acknowledged but missing: %d\n", stored, missing)
	achieved := float64(sent.Load()) / loadTime.Seconds()
	idle := samples[len(samples)-1]
	fmt.Printf("\nVerdict: rate %s (%.0f/s of %d), %s; idle after the load: %d goroutines, %d open files, %.0f MiB RSS\n",
		map[bool]string{true: "met", false: "NOT met"}[achieved >= 0.95*float64(*rate)], achieved, *rate,
		map[bool]string{true: "nothing lost", false: "EVENTS LOST"}[missing == 0], idle.goroutines, idle.fds, idle.rssMiB)
	if missing > 0 {
		os.Exit(1)
	}
}

// seed creates an account (with an API key), the ingestion beets (IDs 1..n),
// 100 beets whose tokens rotate, and 20 beets in period mode.
func seed(dbURL string, n int) (key string, tokens []string, rotating []int64, periodic []string) {
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, dbURL, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	svc := service.New(db, service.Options{})
	a, key, err := svc.CreateAccount(ctx, "soak@example.com", "soak-password", beet.PlanPro)
	if err != nil {
		log.Fatal(err)
	}
	now := time.Now()
	mk := func(name string, d beet.Detection) *beet.Beet {
		b := &beet.Beet{AccountID: a.ID, Name: name, Token: beet.NewToken(), Status: beet.StatusNew,
			Timezone: "UTC", Detection: d, CreatedAt: now, UpdatedAt: now}
		if err := db.CreateBeet(ctx, b); err != nil {
			log.Fatal(err)
		}
		return b
	}
	for i := range n {
		tokens = append(tokens, mk("soak "+strconv.Itoa(i), beet.Detection{Mode: beet.ModeAuto}).Token)
	}
	for i := range 100 {
		rotating = append(rotating, mk("rotating "+strconv.Itoa(i), beet.Detection{Mode: beet.ModeAuto}).ID)
	}
	for i := range 20 {
		periodic = append(periodic, mk("period "+strconv.Itoa(i), beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 60}).Token)
	}
	return key, tokens, rotating, periodic
}

// start runs serve and returns its URL from the "listening" log line.
func start(cmd *exec.Cmd) string {
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	re := regexp.MustCompile(`msg=listening .*\surl=(http://\S+)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			} else if strings.Contains(sc.Text(), "level=ERROR") {
				fmt.Fprintln(os.Stderr, "beet:", sc.Text())
			}
		}
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		log.Fatal("beet serve did not start")
	}
	return ""
}

// metrics reads the plain gauges of /metrics (on the public listener,
// with the run's BEET_METRICS_TOKEN).
func metrics(c *http.Client, base, token string) map[string]float64 {
	out := map[string]float64{}
	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := c.Do(req)
	if err != nil {
		return out
	}
	if res.StatusCode != 200 {
		log.Fatalf("GET /metrics: %s", res.Status)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if ok && !strings.HasPrefix(name, "#") {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				out[name] = f
			}
		}
	}
	return out
}

// openFiles counts the process's open file descriptors.
func openFiles(pid int) int64 {
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return -1
	}
	return int64(len(ents))
}

// procCPU is the user and system CPU time the process has used
// (/proc/<pid>/stat fields 14 and 15, in clock ticks of 1/100 s).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; count from after it.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond
}

// latencies keeps every ingestion latency (8 bytes each: 4.8 MB for 10
// minutes at 1,000/s) for exact quantiles.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func newLatencies() *latencies { return &latencies{d: make([]time.Duration, 0, 1<<16)} }

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

func (l *latencies) quantiles() (p50, p99, max time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return 0, 0, 0
	}
	slices.Sort(l.d)
	at := func(q float64) time.Duration { return l.d[int(q*float64(len(l.d)-1))].Round(100 * time.Microsecond) }
	return at(0.5), at(0.99), l.d[len(l.d)-1].Round(100 * time.Microsecond)
}

// secretKey is a fresh BEET_SECRET_KEY for the run.
func secretKey() string {
	b := make([]byte, 32)
	crand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}
