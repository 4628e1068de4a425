package app

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/ingest"
	"github.com/beethq/beet/internal/server"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/sqlstore"
	"github.com/beethq/beet/internal/version"
)

// Metrics. /metrics is served on the admin listener (BEET_METRICS_LISTEN,
// loopback by default) and, only with BEET_METRICS_TOKEN, on the public
// listener to requests bearing that token. docs/OPERATIONS.md lists every
// series with what to watch.

// storeStatsEvery bounds how often a scrape queries the database for the
// queue gauges: several Prometheus servers scraping every few seconds cost
// one set of queries per interval.
const storeStatsEvery = 10 * time.Second

// instrumentHTTP records beet_http_request_duration_seconds by route
// pattern (as registered on the mux, so a token or ID in the path never
// becomes a label) and status class. The ingestion route's series are
// looked up once: a lookup by label values (hashing both, under a lock)
// on every request cost more than the observation.
func (a *App) instrumentHTTP(reg prometheus.Registerer, next http.Handler) http.Handler {
	dur := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "beet_http_request_duration_seconds",
		Help:    "HTTP request latency by route pattern and status class (2xx, 3xx, 4xx, 5xx).",
		Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	}, []string{"route", "code"})
	reg.MustRegister(dur)
	// The classes ingestion answers with: 200 and 204, 405 and 429.
	ingest2xx, ingest4xx := dur.WithLabelValues(ingest.Prefix, "2xx"), dur.WithLabelValues(ingest.Prefix, "4xx")
	ping2xx, ping4xx := dur.WithLabelValues(ingest.PingPrefix, "2xx"), dur.WithLabelValues(ingest.PingPrefix, "4xx")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		// Behind server.Logging the writer already notes the status.
		sw, ok := w.(statusWriter)
		if !ok {
			rec := &statusRecorder{ResponseWriter: w}
			w, sw = rec, rec
		}
		next.ServeHTTP(w, r)
		status := sw.Status()
		route := r.Pattern // set by the mux (or ingestFirst) on this request
		var obs prometheus.Observer
		switch {
		case route == ingest.Prefix && status/100 == 2:
			obs = ingest2xx
		case route == ingest.Prefix && status/100 == 4:
			obs = ingest4xx
		case route == ingest.PingPrefix && status/100 == 2:
			obs = ping2xx
		case route == ingest.PingPrefix && status/100 == 4:
			obs = ping4xx
		case route == "":
			obs = dur.WithLabelValues("unmatched", codeClass(status))
		default:
			obs = dur.WithLabelValues(route, codeClass(status))
		}
		obs.Observe(time.Since(start).Seconds())
	})
}

// statusWriter is a ResponseWriter that reports the status written
// through it (0 counts as 200).
type statusWriter interface {
	http.ResponseWriter
	Status() int
}

// codeClasses are the status classes' labels, built once: a label built
// per request was an allocation a request.
var codeClasses = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx"}

func codeClass(status int) string {
	if status == 0 {
		status = http.StatusOK
	}
	if c := status / 100; c >= 1 && c <= len(codeClasses) {
		return codeClasses[c-1]
	}
	return strconv.Itoa(status/100) + "xx"
}

// statusRecorder notes the status a handler wrote, where no writer below
// does.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 && code >= 200 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Status() int { return r.status }

// Unwrap lets http.ResponseController reach the connection's writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// countOutcomes counts ingestion requests by outcome. Each outcome's
// counter is looked up once, so the hot path only adds; a switch picks
// it (a map keyed by the outcome's string hashed it on every request).
func countOutcomes(reg prometheus.Registerer) func(ingest.Outcome) {
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "beet_ingest_requests_total",
		Help: "Ingestion GET/POST requests by outcome: recorded, bad_body (recorded without its value), not_recorded (answered 200 and lost), limited, unknown_token, malformed_token, bot.",
	}, []string{"outcome"})
	reg.MustRegister(vec)
	// Every series exists from the start, at 0.
	recorded, badBody, limited := vec.WithLabelValues(string(ingest.OutcomeRecorded)), vec.WithLabelValues(string(ingest.OutcomeBadBody)),
		vec.WithLabelValues(string(ingest.OutcomeLimited))
	unknown, malformed, bot := vec.WithLabelValues(string(ingest.OutcomeUnknownToken)),
		vec.WithLabelValues(string(ingest.OutcomeMalformedToken)), vec.WithLabelValues(string(ingest.OutcomeBot))
	vec.WithLabelValues(string(ingest.OutcomeNotRecorded)) // rare: looked up when it happens
	return func(o ingest.Outcome) {
		switch o {
		case ingest.OutcomeRecorded:
			recorded.Inc()
		case ingest.OutcomeBadBody:
			badBody.Inc()
		case ingest.OutcomeLimited:
			limited.Inc()
		case ingest.OutcomeUnknownToken:
			unknown.Inc()
		case ingest.OutcomeMalformedToken:
			malformed.Inc()
		case ingest.OutcomeBot:
			bot.Inc()
		default:
			vec.WithLabelValues(string(o)).Inc()
		}
	}
}

// observeCommits records the writer's group commits: events per group and
// commit latency, by result (ok, or failed and spooled).
func observeCommits(reg prometheus.Registerer) func(int, time.Duration, bool) {
	size := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "beet_ingest_batch_events",
		Help:    "Events per group commit of the ingestion writer.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 14), // 1 … 8192
	})
	took := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "beet_ingest_commit_seconds",
		Help:    "Latency of the ingestion writer's database commits, by result (ok, failed: the group went to the spool).",
		Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5},
	}, []string{"result"})
	reg.MustRegister(size, took)
	ok, failed := took.WithLabelValues("ok"), took.WithLabelValues("failed")
	return func(n int, d time.Duration, success bool) {
		size.Observe(float64(n))
		if success {
			ok.Observe(d.Seconds())
		} else {
			failed.Observe(d.Seconds())
		}
	}
}

// observeSweep records the sweeper's passes.
func (a *App) observeSweep() func(int, time.Duration, error) {
	took := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "beet_sweep_seconds",
		Help:    "Duration of the deadline sweeper's passes on this instance.",
		Buckets: []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30},
	})
	flips := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "beet_sweep_flips_total", Help: "Beets the sweeper on this instance flipped (silences, drops).",
	})
	failures := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "beet_sweep_failures_total", Help: "Sweeper passes on this instance that failed (the next pass retries).",
	})
	a.reg.MustRegister(took, flips, failures)
	return func(n int, d time.Duration, err error) {
		took.Observe(d.Seconds())
		flips.Add(float64(n))
		if err != nil {
			failures.Inc()
		}
	}
}

// registerStoreMetrics adds the gauges read from the database (cached for
// storeStatsEvery), the connection pools, the spool and the build.
func (a *App) registerStoreMetrics(reg prometheus.Registerer) {
	reg.MustRegister(&storeCollector{app: a})
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "beet_build_info", Help: "Always 1; the labels say which build runs and in which role.",
	}, []string{"version", "revision", "goversion", "role"})
	info := version.Get()
	build.WithLabelValues(info.Version, info.Revision, info.GoVersion, a.cfg.Role).Set(1)
	reg.MustRegister(build)
	if a.cfg.RunsJobs() && a.cfg.CleanupInterval > 0 {
		a.registerRetentionMetrics(reg)
	}
}

// registerRetentionMetrics counts this instance's retention passes, so a
// clean-up that fails on every pass (tables growing) can be alerted on.
func (a *App) registerRetentionMetrics(reg prometheus.Registerer) {
	runs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "beet_retention_runs_total", Help: "Retention clean-up passes on this instance, by result (ok, failed, interrupted: stopped by shutdown, resumed by the next pass).",
	}, []string{"result"})
	deleted := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "beet_retention_deleted_events_total", Help: "Events the retention clean-up on this instance deleted, by plan (rows of dropped partitions not counted).",
	}, []string{"plan"})
	last := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "beet_retention_last_success_timestamp_seconds", Help: "Unix time of this instance's last retention pass that succeeded (0 before the first).",
	})
	reg.MustRegister(runs, deleted, last)
	ok, failed, interrupted := runs.WithLabelValues("ok"), runs.WithLabelValues("failed"), runs.WithLabelValues("interrupted")
	for _, p := range beet.Plans {
		deleted.WithLabelValues(string(p))
	}
	a.backend.Service.SetCleanupObserver(func(rep *service.CleanupReport, err error) {
		if rep != nil {
			for _, p := range rep.Plans {
				deleted.WithLabelValues(string(p.Plan)).Add(float64(p.Deleted))
			}
		}
		switch {
		case errors.Is(err, context.Canceled):
			interrupted.Inc() // a shutdown: no failure to page anyone about
			return
		case err != nil:
			failed.Inc()
			return
		}
		ok.Inc()
		last.Set(float64(a.now().UnixNano()) / 1e9)
	})
}

var (
	descBeets   = prometheus.NewDesc("beet_beets", "Beets by status (the whole database; every instance that runs jobs reports the same: aggregate with max).", []string{"status"}, nil)
	descDue     = prometheus.NewDesc("beet_due_beets", "Beets whose deadline has passed and which the sweeper has not handled yet.", nil, nil)
	descLag     = prometheus.NewDesc("beet_sweep_lag_seconds", "How long the oldest passed deadline has waited for the sweeper (0 when none).", nil, nil)
	descOut     = prometheus.NewDesc("beet_outbox_pending", "Notifications waiting to be sent, due now or retrying later.", nil, nil)
	descOLag    = prometheus.NewDesc("beet_outbox_lag_seconds", "How long the oldest notification a worker could claim has waited (0 when none); one held behind an earlier message of its channel and beet is not counted.", nil, nil)
	descStale   = prometheus.NewDesc("beet_store_stats_age_seconds", "Age of the database counts above (they are cached; a large value means the queries fail).", nil, nil)
	descConns   = prometheus.NewDesc("beet_db_connections", "Database connections by pool and state (in_use, idle).", []string{"pool", "state"}, nil)
	descMax     = prometheus.NewDesc("beet_db_max_open_connections", "Most connections the pool opens.", []string{"pool"}, nil)
	descWaits   = prometheus.NewDesc("beet_db_wait_total", "Times a query waited for a free connection.", []string{"pool"}, nil)
	descWaitS   = prometheus.NewDesc("beet_db_wait_seconds_total", "Time spent waiting for a free connection.", []string{"pool"}, nil)
	descSpool   = prometheus.NewDesc("beet_ingest_spool_bytes", "Bytes of events in the ingestion spool, waiting for the database.", nil, nil)
	descParts   = prometheus.NewDesc("beet_events_partitions", "Monthly partitions of the events table (PostgreSQL).", nil, nil)
	descAhead   = prometheus.NewDesc("beet_events_partitions_ahead_seconds", "How far past now the events partitions reach without a gap (0: inserts go to the default partition; PostgreSQL).", nil, nil)
	descDefRows = prometheus.NewDesc("beet_events_default_partition_rows", "Rows in the default partition of events, which the partition job moves into monthly ones (PostgreSQL; counted up to 100,000).", nil, nil)
)

// storeCollector reads the queue gauges from the database when a scrape
// comes and the last read is older than storeStatsEvery.
type storeCollector struct {
	app *App

	mu   sync.Mutex
	last *sqlstore.OpsStats
	at   time.Time
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descBeets, descDue, descLag, descOut, descOLag, descStale, descConns, descMax, descWaits, descWaitS, descSpool, descParts, descAhead, descDefRows} {
		ch <- d
	}
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	a := c.app
	now := a.now()
	if st, at := c.stats(now); st != nil {
		// Every status, 0 when no beet has it: a series that vanishes
		// instead of reaching 0 keeps alerts on it stuck at their last value.
		for _, status := range beet.Statuses {
			ch <- prometheus.MustNewConstMetric(descBeets, prometheus.GaugeValue, float64(st.Beets[string(status)]), string(status))
		}
		for status, n := range st.Beets {
			if !beet.Status(status).Valid() {
				ch <- prometheus.MustNewConstMetric(descBeets, prometheus.GaugeValue, float64(n), status)
			}
		}
		ch <- prometheus.MustNewConstMetric(descDue, prometheus.GaugeValue, float64(st.Due))
		ch <- prometheus.MustNewConstMetric(descLag, prometheus.GaugeValue, ageSeconds(at, st.OldestDue))
		ch <- prometheus.MustNewConstMetric(descOut, prometheus.GaugeValue, float64(st.Pending))
		ch <- prometheus.MustNewConstMetric(descOLag, prometheus.GaugeValue, ageSeconds(at, st.OldestPending))
		ch <- prometheus.MustNewConstMetric(descStale, prometheus.GaugeValue, now.Sub(at).Seconds())
		if p := st.Partitions; p != nil {
			ch <- prometheus.MustNewConstMetric(descParts, prometheus.GaugeValue, float64(p.Partitions))
			ch <- prometheus.MustNewConstMetric(descAhead, prometheus.GaugeValue, max(0, p.Until.Sub(at).Seconds()))
			ch <- prometheus.MustNewConstMetric(descDefRows, prometheus.GaugeValue, float64(p.DefaultRows))
		}
	}
	for pool, s := range a.backend.Store.PoolStats() {
		ch <- prometheus.MustNewConstMetric(descConns, prometheus.GaugeValue, float64(s.InUse), pool, "in_use")
		ch <- prometheus.MustNewConstMetric(descConns, prometheus.GaugeValue, float64(s.Idle), pool, "idle")
		ch <- prometheus.MustNewConstMetric(descMax, prometheus.GaugeValue, float64(s.MaxOpenConnections), pool)
		ch <- prometheus.MustNewConstMetric(descWaits, prometheus.CounterValue, float64(s.WaitCount), pool)
		ch <- prometheus.MustNewConstMetric(descWaitS, prometheus.CounterValue, s.WaitDuration.Seconds(), pool)
	}
	if a.writer != nil {
		ch <- prometheus.MustNewConstMetric(descSpool, prometheus.GaugeValue, float64(a.writer.SpoolBytes()))
	}
}

// stats returns the cached counts, refreshed when stale; nil until the
// first read succeeds. The counts are the whole database's, the same from
// every instance, and cost a scan of beets: only instances that run jobs
// read them, not every ingest replica (aggregate with max, as the alerts
// do).
func (c *storeCollector) stats(now time.Time) (*sqlstore.OpsStats, time.Time) {
	if !c.app.cfg.RunsJobs() {
		return nil, time.Time{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last != nil && now.Sub(c.at) < storeStatsEvery && !now.Before(c.at) {
		return c.last, c.at
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	st, err := c.app.backend.Store.OpsStats(ctx, now)
	if err != nil {
		c.app.log.Warn("metrics: reading the queue counts failed", "err", err)
		return c.last, c.at
	}
	c.last, c.at = st, now
	return st, now
}

func ageSeconds(now, since time.Time) float64 {
	if since.IsZero() || since.After(now) {
		return 0
	}
	return now.Sub(since).Seconds()
}

// metricsHandler serves the registry.
func (a *App) metricsHandler() http.Handler {
	return promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{ErrorLog: nil})
}

// mountMetrics serves /metrics on the public listener only when a token is
// set, and only to requests that present it.
func (a *App) mountMetrics(mux *http.ServeMux) {
	token := a.cfg.MetricsToken
	if token == "" {
		return
	}
	h := a.metricsHandler()
	want := []byte("Bearer " + token)
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			http.Error(w, "metrics need the bearer token (BEET_METRICS_TOKEN)", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// startAdmin opens the admin listener: /metrics, /healthz and /readyz. A
// taken default port is a warning, not a failure: two instances on one
// host (an ingest and a worker) would otherwise need a setting each just
// to start; a port the operator chose must bind.
func (a *App) startAdmin() error {
	addr := a.cfg.MetricsListen
	if addr == "off" {
		return nil
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.metricsHandler())
	server.RegisterHealth(mux, a.backend.Store, a.intake(), a.stopping.Load, a.log.With("component", "health"))
	s := server.New(mux, a.log.With("component", "admin"))
	if err := s.Open(addr); err != nil {
		if addr == config.DefaultMetricsListen {
			a.log.Warn("admin listener not started: its default address is taken; set BEET_METRICS_LISTEN", "addr", addr, "err", err)
			return nil
		}
		return err
	}
	a.admin = s
	a.onStop("admin", s.Shutdown)
	if a.cfg.MetricsPublic() {
		a.log.Warn("the admin listener (/metrics) binds beyond loopback; keep it off the internet", "addr", s.Addr().String())
	}
	a.log.Info("admin listening", "url", s.URL()+"/metrics")
	return nil
}

// AdminURL is the admin listener's URL, or "" when it is off.
func (a *App) AdminURL() string {
	if a.admin == nil {
		return ""
	}
	return a.admin.URL()
}
