package app

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/ingest"
	"github.com/beethq/beet/internal/ratelimit"
)

// The shared limiter's budget. A call slower than redisTimeout is decided
// in-process, which lets a token past the limit by up to one window per
// instance, so the budget is set for a loaded host rather than an idle one:
// the 50 ms default let 68-89 of 100 concurrent pings through across three
// instances on a busy 2-core machine (cmd/beet TestThreeInstances); 250 ms
// holds the 60. Ingestion waits that long only while Redis is slow, and
// then once a second (the fallback's retry interval).
const (
	redisTimeout = 250 * time.Millisecond
	redisMinIdle = 8
)

// newLimiter picks the ingestion rate limiter: in-process alone, or Redis
// (shared by every instance) with the in-process one as its fallback, so
// ingestion never fails because Redis does.
func (a *App) newLimiter(cfg config.Config, reg *prometheus.Registry) (beet.RateLimiter, error) {
	mem := ratelimit.NewMemory(ratelimit.MemoryOptions{})
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "beet_ratelimit_memory_keys", Help: "Tokens held by the in-process rate limiter.",
	}, func() float64 { return float64(mem.Len()) }))
	if cfg.RedisURL == "" {
		return mem, nil
	}
	opts, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("BEET_REDIS_URL: %w", err)
	}
	// go-redis logs every failed dial on its own logger; the fallback
	// already says once that Redis is down, so its lines go to debug.
	redis.SetLogger(redisLogger{a.log.With("component", "redis")})
	// A warm pool: a burst after a quiet spell would otherwise dial its
	// connections inside the limiter's time budget.
	if opts.MinIdleConns == 0 {
		opts.MinIdleConns = redisMinIdle
	}
	client := redis.NewClient(opts)
	a.onStop("redis", func(context.Context) error { return client.Close() })
	// One PING at start, so a wrong address, password or database index
	// is said once, by name, rather than found as fallback decisions. Not
	// fatal: ingestion never depends on Redis.
	pctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	if err := client.Ping(pctx).Err(); err != nil {
		a.log.Warn("Redis does not answer: each instance limits on its own until it does; check BEET_REDIS_URL",
			"setting", "BEET_REDIS_URL", "err", err)
	}
	cancel()
	fallbacks := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "beet_ratelimit_fallback_total", Help: "Rate-limit decisions made in-process because Redis did not answer.",
	})
	reg.MustRegister(fallbacks)
	return ratelimit.NewFallback(ratelimit.NewRedis(client, ratelimit.RedisOptions{}), mem,
		a.log.With("component", "ratelimit"), ratelimit.WithCounter(fallbacks), ratelimit.WithTimeout(redisTimeout)), nil
}

// startIngest opens the spool, starts the writer and returns the ingestion
// handler. Teardown runs writer, handler, spool: the HTTP server (stopped
// before all of them) has drained requests by then, and the writer's last
// replay hands the handler the old tokens it finds in the spool.
func (a *App) startIngest(cfg config.Config, reg *prometheus.Registry) (*ingest.Handler, error) {
	limiter, err := a.newLimiter(cfg, reg)
	if err != nil {
		return nil, err
	}
	proxies, err := config.ParseProxies(cfg.TrustedProxies)
	if err != nil {
		return nil, err
	}
	path := spoolPath(cfg)
	spool, err := ingest.OpenSpool(path, 0)
	if err != nil {
		return nil, err
	}
	a.onStop("spool", func(context.Context) error { return spool.Close() })
	log := a.log.With("component", "ingest")
	// One lane by default on both engines: on the quiet 2-core machine one
	// PostgreSQL lane made groups four times bigger and beat four lanes at
	// every load (open loop 3,750 req/s at p99 < 10 ms against 1,500;
	// docs/BENCHMARKS.md). More lanes can help where the database server
	// has cores of its own and commits wait on its disk, not its CPU.
	lanes := cfg.IngestLanes
	if lanes == 0 {
		lanes = 1
	}
	// BEET_INGEST_FSYNC=overlap, SQLite on Linux: a commit's fsync runs
	// beside the next commit, and a request is answered after the fsync of
	// its own (docs/OPERATIONS.md). Not the default: on the loaded 2-core
	// machine it was no clear win (docs/BENCHMARKS.md, "Why it is built this way").
	syncApart := cfg.IngestFsync == config.IngestFsyncOverlap && a.backend.Store.SyncsApart()
	journal := cfg.IngestAck == config.IngestAckJournal
	var store ingest.WriterStore = a.backend.Store
	if a.degraded.Load() {
		store = uncheckedStore{a}
	}
	w := ingest.NewWriter(store, spool, ingest.WriterOptions{
		MaxBatch: cfg.IngestBatch, MaxWait: cfg.IngestWait, Log: log, Observe: a.backend.Service.ObserveEvents,
		OnCommit:  observeCommits(reg),
		Lanes:     lanes,
		SyncApart: syncApart,
		Journal:   journal,
	})
	switch {
	case journal:
		log.Info("pings are answered once fsync'd in the spool, and applied to the database right after", "ingest_ack", config.IngestAckJournal, "spool", path)
	case syncApart:
		log.Info("ingestion commits fsync the WAL beside the next commit", "ingest_fsync", config.IngestFsyncOverlap)
	}
	a.writer = w
	registerWriterMetrics(reg, w, a.degraded.Load)
	h := ingest.New(ingest.Options{Store: a.backend.Store, Limiter: limiter, Writer: w, Now: a.now, Log: log,
		TrustedProxies: proxies, Count: countOutcomes(reg)})
	a.onStop("ingest", func(context.Context) error { h.Close(); return nil })
	a.onStop("writer", func(ctx context.Context) error {
		// During a database outage the replay is retried until the
		// shutdown deadline; what is still spooled then waits in the file
		// for the next start on it, which must be said.
		left, err := w.CloseWithin(ctx)
		if err != nil {
			return fmt.Errorf("count the spool's events: %w", err)
		}
		if left > 0 {
			a.log.Error(fmt.Sprintf("spool still holds %d events at %s", left, path),
				"events", left, "spool", path,
				"hint", "they are replayed when beet starts again on this file: keep it (docs/OPERATIONS.md)")
		}
		return nil
	})
	a.ingest = h
	registerUnknownTokenMetrics(reg, h.UnknownStats())
	a.log.Debug("ingestion ready", "spool", path)
	return h, nil
}

// spoolPath is BEET_SPOOL_PATH, or a file next to the SQLite database, or
// beet.spool in the working directory for PostgreSQL.
func spoolPath(cfg config.Config) string {
	if cfg.SpoolPath != "" {
		return cfg.SpoolPath
	}
	if rest, ok := strings.CutPrefix(cfg.DatabaseURL, "sqlite:"); ok {
		return strings.TrimPrefix(rest, "//") + ".spool"
	}
	return filepath.Join(".", "beet.spool")
}

func registerWriterMetrics(reg *prometheus.Registry, w *ingest.Writer, degraded func() bool) {
	st := w.Stats()
	for name, c := range map[string]interface{ Load() int64 }{
		"committed": &st.Committed, "spooled": &st.Spooled, "replayed": &st.Replayed, "dropped": &st.Dropped,
	} {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "beet_ingest_events_" + name + "_total",
			Help: "Ingested events " + name + " by the writer (an event whose token was rotated meanwhile is dropped inside its commit).",
		}, func() float64 { return float64(c.Load()) }))
	}
	// 1 while events wait in the spool because commits fail (or a spool
	// left from before is being replayed), and from a degraded start until
	// the database is checked, pings or none; with BEET_INGEST_ACK=journal
	// the journal's normal lag of a few ms is not spooling, though
	// beet_ingest_spool_bytes counts it. BeetSpooling alerts on this.
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "beet_ingest_spooling", Help: "1 while events wait in the spool for a database that fails commits (or a spool from before is replayed), or pings would since a start without the database, else 0; the journal's normal lag is 0.",
	}, func() float64 {
		if w.Spooling() || degraded() {
			return 1
		}
		return 0
	}))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "beet_ingest_commits_total", Help: "Group commits (transactions or spool appends) made by the writer; with BEET_INGEST_ACK=journal, the database commits that apply the journal.",
	}, func() float64 { return float64(st.Batches.Load()) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "beet_ingest_journal_appends_total", Help: "Groups of requests appended and fsync'd to the journal, each answered after its append (BEET_INGEST_ACK=journal).",
	}, func() float64 { return float64(st.JournalAppends.Load()) }))
	for name, c := range map[string]struct {
		v    *atomic.Int64
		help string
	}{
		"beet_ingest_commit_seconds_total":  {&st.CommitNanos, "Time the writer spent in database commits of live events."},
		"beet_ingest_detect_seconds_total":  {&st.DetectNanos, "Time detection spent on committed events, inside the commits."},
		"beet_ingest_fsync_seconds_total":   {&st.SyncNanos, "Time spent in fsyncs of the SQLite WAL made beside the next commit (BEET_INGEST_FSYNC=overlap); a request waits for one."},
		"beet_ingest_journal_seconds_total": {&st.JournalNanos, "Time spent appending and fsyncing groups to the journal (BEET_INGEST_ACK=journal); a request waits for its group's."},
	} {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: c.help},
			func() float64 { return float64(c.v.Load()) / 1e9 }))
	}
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "beet_ingest_fsyncs_total", Help: "Fsyncs of the SQLite WAL made beside the next commit (BEET_INGEST_FSYNC=overlap), each for every group committed before it began.",
	}, func() float64 { return float64(st.Syncs.Load()) }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "beet_ingest_detect_beets_total", Help: "Beets detection was applied to (one per beet per commit).",
	}, func() float64 { return float64(st.DetectBeets.Load()) }))
}

// registerUnknownTokenMetrics counts requests whose token matched no beet,
// by outcome. The tokens themselves are never in metrics.
func registerUnknownTokenMetrics(reg *prometheus.Registry, st *ingest.UnknownStats) {
	for outcome, c := range map[string]interface{ Load() int64 }{
		"malformed": &st.Malformed, "unknown": &st.Unknown, "rotated": &st.Rotated,
	} {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "beet_ingest_unknown_tokens_total",
			Help:        "Ingestion requests whose token matched no beet (nothing recorded), by outcome: malformed (cannot be a token), unknown (well-formed), rotated (a beet's old token within the grace window).",
			ConstLabels: prometheus.Labels{"outcome": outcome},
		}, func() float64 { return float64(c.Load()) }))
	}
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "beet_ingest_unknown_token_lookups_dropped_total",
		Help: "Well-formed unknown tokens not checked against rotated ones because the lookup queue was full.",
	}, func() float64 { return float64(st.Dropped.Load()) }))
}

// redisLogger sends go-redis's internal log lines to slog at debug level.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, fmt.Sprintf(format, v...))
}
