// Command capacity takes the measurements behind the capacity model in
// docs/OPERATIONS.md. Each part prints Markdown:
//
//	storage   bytes (table, indexes) and row writes per event: -events events
//	          in ingestion-sized commits, on SQLite and on PostgreSQL
//	redis     Redis commands per ingestion request and per API request, read
//	          from INFO commandstats of a Redis this run may reset (-redis;
//	          use a private one: the counters are server-wide)
//	million   1,000,000 beets on PostgreSQL: beet serve under ingestion load
//	          with 1% of the beets overdue, reporting its memory, the sweep
//	          lag and the ingestion rate
//
//	go run ./bench/capacity -part storage -events 100000
//	redis-server --port 6390 --save '' & go run ./bench/capacity -part redis -redis redis://127.0.0.1:6390/0
//	go run ./bench/capacity -part million -duration 60s
//
// PostgreSQL comes from -postgres or BEET_TEST_POSTGRES_URL; every part
// works in a schema of its own and drops it at the end.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/beethq/beet"
	"github.com/beethq/beet/bench/benchkit"
	"github.com/beethq/beet/internal/sqlstore"
)

var (
	part     = flag.String("part", "storage", "storage, redis or million")
	events   = flag.Int("events", 100_000, "events written by the storage part")
	pgURL    = flag.String("postgres", os.Getenv("BEET_TEST_POSTGRES_URL"), "PostgreSQL server")
	redisURL = flag.String("redis", "", "a Redis whose statistics this run may reset (redis part)")
	duration = flag.Duration("duration", 60*time.Second, "load time of the million part")
	beets    = flag.Int("beets", 1_000_000, "beets of the million part")
	conns    = flag.Int("conns", 32, "concurrent connections of the load")
)

func main() {
	flag.Parse()
	log.SetFlags(0)
	switch *part {
	case "storage":
		storage()
	case "redis":
		redisPart()
	case "million":
		million()
	default:
		log.Fatalf("unknown -part %q", *part)
	}
}

// ---- storage ----

// A browser's User-Agent, the common case for beacons (~110 bytes).
const userAgent = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"

func storage() {
	fmt.Printf("## Storage per event (%s)\n\n", time.Now().UTC().Format("2006-01-02"))
	fmt.Printf("%d events over 100 beets, committed 256 at a time as ingestion groups them; GET with a %d-byte User-Agent, every other one with a value.\n\n", *events, len(userAgent))
	fmt.Println("| engine | table B/event | indexes B/event | total B/event | rows inserted/event | rows updated/event | commits |")
	fmt.Println("|---|---|---|---|---|---|---|")
	dir, _ := os.MkdirTemp("", "beet-capacity-")
	defer os.RemoveAll(dir)
	storageRun("SQLite", "sqlite://"+filepath.Join(dir, "beet.db"))
	if *pgURL != "" {
		url, drop := benchkit.PGSchema(*pgURL, "beet_capacity_")
		defer drop()
		storageRun("PostgreSQL", url)
	}
}

func storageRun(name, url string) {
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, url, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	ids, _ := seedBeets(db, 100)
	raw := benchkit.OpenDB(url, "mode=ro")
	raw.SetMaxOpenConns(1) // one session: current_schema and stats flushes
	defer raw.Close()
	t0, i0, _ := eventBytes(raw, db.Engine())
	ins0, upd0 := pgWrites(raw, db.Engine())
	now := time.Now().Add(-time.Duration(*events) * time.Second)
	commits := 0
	batch := make([]beet.Event, 0, 256)
	for i := range *events {
		at := now.Add(time.Duration(i) * time.Second)
		e := beet.Event{ID: eventID(at), BeetID: ids[i%len(ids)], ReceivedAt: at, Method: "GET", UserAgent: userAgent}
		if i%2 == 0 {
			v := float64(i)
			e.Value, e.Method = &v, "POST"
		}
		batch = append(batch, e)
		if len(batch) == cap(batch) || i == *events-1 {
			if err := db.AddEvents(ctx, batch, nil); err != nil {
				log.Fatal(err)
			}
			commits++
			batch = batch[:0]
		}
	}
	if db.Engine() == "postgres" {
		raw.Exec("VACUUM ANALYZE events")
		time.Sleep(1500 * time.Millisecond) // statistics reach the views at most once a second
	}
	t1, i1, _ := eventBytes(raw, db.Engine())
	ins1, upd1 := pgWrites(raw, db.Engine())
	n := float64(*events)
	writes := "n/a | n/a"
	if db.Engine() == "postgres" {
		writes = fmt.Sprintf("%.2f | %.2f", float64(ins1-ins0)/n, float64(upd1-upd0)/n)
	}
	fmt.Printf("| %s | %.1f | %.1f | %.1f | %s | %d |\n", name, float64(t1-t0)/n, float64(i1-i0)/n, float64(t1-t0+i1-i0)/n, writes, commits)
}

// eventBytes returns the bytes of the events table and of its indexes.
func eventBytes(raw *sql.DB, engine string) (table, indexes int64, err error) {
	if engine == "postgres" {
		// events is partitioned: its size is its partitions'.
		err = raw.QueryRow(`SELECT COALESCE(SUM(pg_table_size(relid)), 0), COALESCE(SUM(pg_indexes_size(relid)), 0)
			FROM pg_partition_tree('events') WHERE isleaf`).Scan(&table, &indexes)
		if err != nil {
			log.Fatal(err)
		}
		return
	}
	// dbstat counts the pages of each b-tree; sqlite_autoindex is the
	// primary key's.
	rows, err := raw.Query(`SELECT name, SUM(pgsize) FROM dbstat GROUP BY name`)
	if err != nil {
		log.Fatalf("dbstat: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var size int64
		rows.Scan(&name, &size)
		switch {
		case name == "events":
			table = size
		case name == "events_beet_id_received_at" || name == "events_received_at" || strings.HasPrefix(name, "sqlite_autoindex_events"):
			indexes += size
		}
	}
	return table, indexes, rows.Err()
}

// pgWrites sums the rows inserted and updated in the schema's tables.
func pgWrites(raw *sql.DB, engine string) (ins, upd int64) {
	if engine != "postgres" {
		return 0, 0
	}
	raw.Exec("SELECT pg_stat_force_next_flush()")
	if err := raw.QueryRow(`SELECT COALESCE(SUM(n_tup_ins), 0), COALESCE(SUM(n_tup_upd), 0)
		FROM pg_stat_user_tables WHERE schemaname = current_schema()`).Scan(&ins, &upd); err != nil {
		log.Fatal(err)
	}
	return ins, upd
}

// ---- redis ----

func redisPart() {
	if *redisURL == "" || *pgURL == "" {
		log.Fatal("-redis and -postgres are needed")
	}
	opt, err := redis.ParseURL(*redisURL)
	if err != nil {
		log.Fatal(err)
	}
	rc := redis.NewClient(opt)
	defer rc.Close()
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "beet-capacity-")
	defer os.RemoveAll(dir)
	url, drop := benchkit.PGSchema(*pgURL, "beet_capacity_")
	defer drop()
	db, err := sqlstore.Open(ctx, url, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	_, toks := seedBeets(db, 100)
	db.Close()
	bin := benchkit.Build(dir, "beet", "./cmd/beet")
	p := startBeet(bin, url, dir, "BEET_REDIS_URL="+*redisURL)
	defer p.stop()
	client := &http.Client{}
	const n = 2000
	measure := func(what string, fn func(i int)) map[string]int64 {
		rc.ConfigResetStat(ctx)
		for i := range n {
			fn(i)
		}
		return commandStats(rc)
	}
	ingest := measure("ingest", func(i int) { get(client, p.url+"/api/v1/beet/"+toks[i%len(toks)]) })
	health := measure("readyz", func(int) { get(client, p.url+"/readyz") })
	fmt.Printf("## Redis commands per request (%s)\n\n", time.Now().UTC().Format("2006-01-02"))
	fmt.Printf("%d requests of each kind to one `beet serve` on PostgreSQL with `BEET_REDIS_URL`; `INFO commandstats` after `CONFIG RESETSTAT`, divided by %d.\n\n", n, n)
	fmt.Println("| request | command | calls per request |")
	fmt.Println("|---|---|---|")
	for _, r := range []struct {
		name  string
		stats map[string]int64
	}{{"ingestion GET", ingest}, {"GET /readyz", health}} {
		var keys []string
		for k := range r.stats {
			if k != "config|resetstat" && k != "config" && k != "info" {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		if len(keys) == 0 {
			fmt.Printf("| %s | (none) | 0 |\n", r.name)
		}
		for _, k := range keys {
			fmt.Printf("| %s | %s | %.3f |\n", r.name, k, float64(r.stats[k])/n)
		}
	}
}

var cmdstat = regexp.MustCompile(`^cmdstat_(\S+):calls=(\d+)`)

func commandStats(rc *redis.Client) map[string]int64 {
	s, err := rc.Info(context.Background(), "commandstats").Result()
	if err != nil {
		log.Fatal(err)
	}
	out := map[string]int64{}
	for _, l := range strings.Split(s, "\n") {
		if m := cmdstat.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			out[m[1]], _ = strconv.ParseInt(m[2], 10, 64)
		}
	}
	return out
}

// ---- million ----

func million() {
	if *pgURL == "" {
		log.Fatal("-postgres or BEET_TEST_POSTGRES_URL is needed")
	}
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "beet-capacity-")
	defer os.RemoveAll(dir)
	bin := benchkit.Build(dir, "beet", "./cmd/beet")
	url, drop := benchkit.PGSchema(*pgURL, "beet_capacity_")
	defer drop()
	db, err := sqlstore.Open(ctx, url, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	raw := benchkit.OpenDB(url, "mode=ro")
	raw.SetMaxOpenConns(1) // one session: current_schema and stats flushes
	defer raw.Close()
	start := time.Now()
	toks := seedMillion(raw, *beets)
	db.Close()
	seeded := time.Since(start)
	var dbBytes int64
	raw.QueryRow(`SELECT pg_total_relation_size('beets')`).Scan(&dbBytes)

	p := startBeet(bin, url, dir)
	defer p.stop()
	idleRSS := benchkit.RSS(p.cmd.Process.Pid)
	var acked, failed atomic.Int64
	var lat latencies
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range *conns {
		wg.Go(func() {
			c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			for {
				select {
				case <-stop:
					return
				default:
				}
				t := time.Now()
				if get(c, p.url+"/api/v1/beet/"+toks[mrand.IntN(len(toks))]) {
					acked.Add(1)
					lat.add(time.Since(t))
				} else {
					failed.Add(1)
				}
			}
		})
	}
	type sample struct {
		at       time.Duration
		rss, due int64
		lag      time.Duration
	}
	var samples []sample
	t0 := time.Now()
	var peak int64
	for time.Since(t0) < *duration {
		time.Sleep(2 * time.Second)
		s := sample{at: time.Since(t0).Round(time.Second), rss: benchkit.RSS(p.cmd.Process.Pid)}
		var oldest sql.NullInt64
		now := time.Now()
		raw.QueryRow(`SELECT COUNT(*), MIN(due_at) FROM beets WHERE due_at IS NOT NULL AND due_at <= $1`, now.UnixMicro()).Scan(&s.due, &oldest)
		if oldest.Valid {
			s.lag = now.Sub(time.UnixMicro(oldest.Int64)).Round(time.Second)
		}
		peak = max(peak, s.rss)
		samples = append(samples, s)
	}
	close(stop)
	wg.Wait()
	elapsed := time.Since(t0)
	var stored, down int64
	raw.QueryRow(`SELECT COUNT(*) FROM events`).Scan(&stored)
	raw.QueryRow(`SELECT COUNT(*) FROM beets WHERE status = 'down'`).Scan(&down)

	fmt.Printf("## %d beets on PostgreSQL (%s)\n\n", *beets, time.Now().UTC().Format("2006-01-02"))
	fmt.Printf("Seeded in %s (beets table and indexes: %d MiB); %d (1%%) overdue at start, the rest due in 31 min. One `beet serve` (all jobs), %d connections sending GET beacons to random tokens for %s.\n\n",
		seeded.Round(time.Second), dbBytes>>20, *beets/100, *conns, *duration)
	fmt.Printf("- ingestion: %d acknowledged, **%.0f events/s**, p50 %s, p99 %s; %d failed; %d events stored\n",
		acked.Load(), float64(acked.Load())/elapsed.Seconds(), lat.q(0.5), lat.q(0.99), failed.Load(), stored)
	fmt.Printf("- memory (RSS of beet serve): %d MiB idle after start, **peak %d MiB** (VmHWM %d MiB)\n", idleRSS>>10, peak>>10, benchkit.HWM(p.cmd.Process.Pid)>>10)
	fmt.Printf("- beets flipped down by the sweeper during the run: %d of %d overdue\n\n", down, *beets/100)
	fmt.Println("| t | RSS MiB | beets overdue | sweep lag (now − oldest passed deadline) |")
	fmt.Println("|---|---|---|---|")
	for _, s := range samples {
		fmt.Printf("| %s | %d | %d | %s |\n", s.at, s.rss>>10, s.due, s.lag)
	}
}

// seedMillion inserts n period beets (hourly, 60 s grace), up, with valid
// tokens, 1% of them overdue by a minute, in batches of 50,000.
func seedMillion(raw *sql.DB, n int) []string {
	var account int64
	now := time.Now()
	if err := raw.QueryRow(`INSERT INTO accounts (plan, created_at) VALUES ('pro', $1) RETURNING id`, now.UnixMicro()).Scan(&account); err != nil {
		log.Fatalf("seed account: %v", err)
	}
	toks := make([]string, n)
	for i := range toks {
		toks[i] = beet.NewToken()
	}
	const batch = 50_000
	for lo := 0; lo < n; lo += batch {
		hi := min(n, lo+batch)
		_, err := raw.Exec(`INSERT INTO beets (account_id, name, description, token, status, status_reason, status_since, timezone,
			detection, allow_bots, last_event_at, due_at, created_at, updated_at)
			SELECT $1, 'job ' || (t.i + $6), '', t.tok, 'up', 'Up.', 0, 'UTC',
				'{"mode":"period","period_seconds":3600,"grace_seconds":60}', false, $2,
				CASE WHEN (t.i + $6) % 100 = 0 THEN $3::bigint ELSE $4::bigint END, $5, $5
			FROM unnest($7::text[]) WITH ORDINALITY AS t(tok, i)`,
			account, now.Add(-30*time.Minute).UnixMicro(), now.Add(-time.Minute).UnixMicro(),
			now.Add(31*time.Minute).UnixMicro(), now.UnixMicro(), lo, "{"+strings.Join(toks[lo:hi], ",")+"}")
		if err != nil {
			log.Fatalf("seed beets: %v", err)
		}
	}
	raw.Exec("ANALYZE beets")
	return toks
}

// ---- shared ----

func seedBeets(db *sqlstore.DB, n int) ([]int64, []string) {
	ctx := context.Background()
	now := time.Now()
	a := &beet.Account{Plan: beet.PlanPro, CreatedAt: now}
	if err := db.CreateAccount(ctx, a, &beet.User{Email: "capacity@example.com", PasswordHash: "-", CreatedAt: now}); err != nil {
		log.Fatal(err)
	}
	ids, toks := make([]int64, n), make([]string, n)
	for i := range n {
		b := &beet.Beet{AccountID: a.ID, Name: "capacity " + strconv.Itoa(i), Token: beet.NewToken(), Status: beet.StatusNew,
			Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}, CreatedAt: now, UpdatedAt: now}
		if err := db.CreateBeet(ctx, b); err != nil {
			log.Fatal(err)
		}
		ids[i], toks[i] = b.ID, b.Token
	}
	return ids, toks
}

// eventID is a UUIDv7, as ingestion makes them.
func eventID(t time.Time) beet.EventID {
	var id beet.EventID
	binary.BigEndian.PutUint64(id[0:8], uint64(t.UnixMilli())<<16)
	rand.Read(id[6:])
	id[6] = id[6]&0x0f | 0x70
	id[8] = id[8]&0x3f | 0x80
	return id
}

type proc struct {
	cmd *exec.Cmd
	url string
}

func (p *proc) stop() { benchkit.Stop(p.cmd) }

var listening = regexp.MustCompile(`msg=listening .*\surl=(http://\S+)`)

func startBeet(bin, dbURL, dir string, env ...string) *proc {
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--cleanup-interval", "0")
	cmd.Env = append(append(os.Environ(), "BEET_DATABASE_URL="+dbURL,
		"BEET_SPOOL_PATH="+filepath.Join(dir, strconv.FormatInt(time.Now().UnixNano(), 36)+".spool")), env...)
	r, w := io.Pipe()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
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
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		log.Fatal("beet serve did not start")
	}
	return nil
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

type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) { l.mu.Lock(); l.d = append(l.d, d); l.mu.Unlock() }

func (l *latencies) q(p float64) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return "-"
	}
	slices.Sort(l.d)
	d := l.d[int(math.Min(float64(len(l.d)-1), p*float64(len(l.d))))]
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}
