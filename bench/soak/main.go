// Command soak runs Beet (the built binary, SQLite) under mixed load for a
// while and reports whether memory, goroutines and open files stay flat
// and whether every acknowledged event is in the database at the end.
//
//	go run ./bench/soak -duration 10m
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
	flag.Parse()

	dir, err := os.MkdirTemp("", "beet-soak")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "beet")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/beet").CombinedOutput(); err != nil {
		log.Fatalf("go build: %v\n%s", err, out)
	}
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

	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--cleanup-interval", "1m")
	cmd.Env = append(os.Environ(), "BEET_DATABASE_URL="+dbURL, "BEET_SPOOL_PATH="+filepath.Join(dir, "soak.spool"),
		"BEET_ALLOW_PRIVATE_TARGETS=true", "BEET_LOG_LEVEL=info")
	base := start(cmd)
	pid := cmd.Process.Pid
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
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

	// Ingestion, open loop at the rate, over 32 senders.
	ticker := time.NewTicker(time.Second / time.Duration(*rate))
	jobs := make(chan int, 1024)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				sent.Add(1)
				res, err := client.Get(base + "/api/v1/beet/" + tokens[i])
				if err != nil {
					failed.Add(1)
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				switch res.StatusCode {
				case 200:
					ok200.Add(1)
					acked[i].Add(1)
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
		for {
			select {
			case <-ctx.Done():
				ticker.Stop()
				return
			case <-ticker.C:
				select {
				case jobs <- rand.IntN(len(tokens)):
				default: // senders saturated: the rate is not met, counted below
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
	}
	var samples []sample
	t0 := time.Now()
	takeSample := func() {
		m := metrics(client, base)
		samples = append(samples, sample{time.Since(t0).Round(time.Second), float64(benchkit.RSS(pid)) / 1024,
			int64(m["go_goroutines"]), int64(m["process_open_fds"]), sent.Load()})
	}
	takeSample()
	tick := time.NewTicker(30 * time.Second)
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-tick.C:
			takeSample()
			s := samples[len(samples)-1]
			fmt.Fprintf(os.Stderr, "%6s rss %.0f MiB, goroutines %d, fds %d, sent %d\n", s.at, s.rssMiB, s.goroutines, s.fds, s.requests)
		}
	}
	wg.Wait()
	time.Sleep(2 * time.Second) // idle: what stays is what leaks
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
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()

	elapsed := time.Since(t0)
	fmt.Printf("Soak: %s, %d beets, target %d req/s; Beet on SQLite (the built binary)\n\n", elapsed.Round(time.Second), len(tokens), *rate)
	fmt.Printf("| at | RSS (MiB) | goroutines | open files | ingestion requests sent |\n|---|---|---|---|---|\n")
	for _, s := range samples {
		fmt.Printf("| %s | %.0f | %d | %d | %d |\n", s.at, s.rssMiB, s.goroutines, s.fds, s.requests)
	}
	fmt.Printf("\nIngestion: %d sent (%.0f/s), %d acknowledged (200), %d rate-limited (429), %d failed\n",
		sent.Load(), float64(sent.Load())/duration.Seconds(), ok200.Load(), limited.Load(), failed.Load())
	fmt.Printf("API: %d calls, %d failed or 5xx; %d token rotations\n", apiCalls.Load(), apiErrors.Load(), rotations.Load())
	fmt.Printf("Webhook receiver: %d posts, %d answered 500 on purpose\n", hookTotal.Load(), hookFailed.Load())
	fmt.Printf("Events stored for the ingestion beets: %d; acknowledged but missing: %d\n", stored, missing)
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

// metrics reads the plain gauges of /metrics.
func metrics(c *http.Client, base string) map[string]float64 {
	out := map[string]float64{}
	res, err := c.Get(base + "/metrics")
	if err != nil {
		return out
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
