// Package app is Beet's composition root: the one place that imports every
// adapter and wires them together. New opens the store, applies the
// migrations, builds the service and the HTTP routes; Start binds the
// listener and starts the background jobs; Stop tears everything down in the
// reverse order. The package handles no signals, so tests embed it.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/beethq/beet/internal/api"
	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/ingest"
	"github.com/beethq/beet/internal/jobs"
	"github.com/beethq/beet/internal/server"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/web"
)

// Options are the parts of the app that are not configuration: what tests
// swap out.
type Options struct {
	// Log receives every log line; nil discards them.
	Log *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// PasswordParams lowers the password hash cost in tests (argon2id at
	// 64 MiB takes seconds under -race); nil is the production cost.
	PasswordParams *service.PasswordParams
	// ServerTimeouts replaces the public listener's timeouts when set
	// (tests of slow clients); zero keeps server.DefaultTimeouts.
	ServerTimeouts server.Timeouts
	// NoJobs starts no background job (sweeper, clean-up, outbox worker)
	// whatever the role: tests that watch the queues stand still.
	NoJobs bool
}

// App is a running Beet: store, service, HTTP server and jobs.
type App struct {
	cfg     config.Config
	log     *slog.Logger
	now     func() time.Time
	backend *Backend
	server  *server.Server
	admin   *server.Server // metrics listener; nil when off
	writer  *ingest.Writer
	ingest  *ingest.Handler
	reg     *prometheus.Registry
	early   net.Listener // bound in New when the base URL names port 0 (bindEarly)
	noJobs  bool         // Options.NoJobs
	// stopping is set on SIGTERM for BEET_SHUTDOWN_DELAY before the
	// shutdown: /readyz answers 503 while the instance still serves.
	stopping atomic.Bool
	// degraded is set from an ingest instance's start without its
	// database until checkDatabase has checked it (degraded.go); failed
	// carries what then ends the instance to Run.
	degraded atomic.Bool
	failed   chan error

	mu      sync.Mutex
	stops   []stopFunc // LIFO teardown, drained by Stop
	stopped bool
}

type stopFunc struct {
	name string
	fn   func(ctx context.Context) error
}

// onStop pushes a teardown step. Steps run in reverse order of
// registration, so what started last stops first.
func (a *App) onStop(name string, fn func(ctx context.Context) error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stops = append(a.stops, stopFunc{name, fn})
}

// New wires an app from cfg: it opens the store and migrates it, then builds
// the service and routes. If a step fails, the steps before it are undone.
func New(ctx context.Context, cfg config.Config, opts Options) (*App, error) {
	if err := CheckConfig(cfg); err != nil {
		return nil, err
	}
	a := &App{cfg: cfg, log: opts.Log, now: opts.Now, noJobs: opts.NoJobs, failed: make(chan error, 1)}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if err := a.bindEarly(); err != nil {
		return nil, err
	}
	if a.now == nil {
		a.now = time.Now
	}
	if err := a.lock(cfg); err != nil {
		a.Stop(ctx)
		return nil, err
	}
	b, err := a.openBackend(ctx, cfg, opts)
	if err != nil {
		a.Stop(ctx)
		return nil, err
	}
	a.backend = b
	a.onStop("store", func(context.Context) error { return b.Close() })
	if cfg.SecretKey == "" {
		a.log.Warn("BEET_SECRET_KEY is not set: channel secrets (webhook secrets, chat URLs, PagerDuty keys) are stored in plain text in the database; set it to encrypt them (docs/SECURITY.md)")
	}

	reg := prometheus.NewRegistry()
	a.reg = reg
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	a.registerStoreMetrics(reg)

	mux := http.NewServeMux()
	var routes http.Handler = mux
	server.RegisterHealth(mux, b.Store, a.intake(), a.stopping.Load, a.log.With("component", "health"))
	if cfg.RunsHTTP() {
		ih, err := a.startIngest(cfg, reg)
		if err != nil {
			a.Stop(ctx)
			return nil, err
		}
		ih.Register(mux)
		var rest http.Handler = mux
		if cfg.IngestAck == config.IngestAckJournal {
			rest = seesAnsweredPings(a.writer, mux)
		}
		if a.degraded.Load() {
			rest = a.untilChecked(rest)
		}
		routes = ingestFirst(ih, rest)
		apiHandler := api.New(b.Service, a.log.With("component", "api"))
		if err := apiHandler.SetBasePath(web.BasePath(cfg.BaseURL)); err != nil {
			a.Stop(ctx)
			return nil, err
		}
		apiHandler.Register(mux)
		if err := a.mountWeb(mux); err != nil {
			a.Stop(ctx)
			return nil, err
		}
	}
	a.mountMetrics(mux)
	// The prefix comes off before the mux, so that the metrics see the route.
	a.server = server.New(underBasePath(a.cfg.BaseURL, a.instrumentHTTP(reg, routes)), a.log.With("component", "http"))
	if opts.ServerTimeouts != (server.Timeouts{}) {
		a.server.SetTimeouts(opts.ServerTimeouts)
	}
	return a, nil
}

// intake is what readiness asks of this instance's ingestion: nil on a
// worker, which has none and needs the database for all it does.
func (a *App) intake() server.Intake {
	if !a.cfg.RunsHTTP() {
		return nil
	}
	return writerIntake{a}
}

// writerIntake asks the writer, which startIngest makes after the probes
// are mounted.
type writerIntake struct{ a *App }

func (w writerIntake) CanSpool() bool { return w.a.writer != nil && w.a.writer.CanSpool() }

// ingestFirst hands a request for the ingestion endpoint (either of its
// paths: /api/v1/beet/ and Healthchecks' /ping/) straight to its
// handler, as the mux would route it, and every other request to the mux:
// ingestion is the bulk of the traffic, and the mux tries the API's
// wildcard routes on the way (five allocations a request). A path the mux
// would treat otherwise (not clean, so redirected; escaped; a CONNECT)
// goes to the mux.
func ingestFirst(ingestion, mux http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if route, ok := ingest.Route(r.URL.Path); ok && r.URL.RawPath == "" && r.Method != http.MethodConnect && cleanPath(r.URL.Path) {
			r.Pattern = route // for the metrics
			ingestion.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// answeredPingsWait bounds how long a request waits for the journal's
// replayer: past it (the database refuses the journal's events) it is
// served from what the database holds.
const answeredPingsWait = time.Second

// seesAnsweredPings makes every request but a ping or a probe wait until
// the database holds the pings this instance answered before it came. With
// BEET_INGEST_ACK=journal a ping is answered before its event is applied,
// and a script that pings and then reads its beet must find the event.
// The health probes and /metrics answer at once: they read no beet, and a
// liveness probe must not wait on the database.
func seesAnsweredPings(w *ingest.Writer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz", "/readyz", "/metrics":
			next.ServeHTTP(rw, r)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), answeredPingsWait)
		w.WaitApplied(ctx) // on timeout, serve what the database has
		cancel()
		next.ServeHTTP(rw, r)
	})
}

// cleanPath reports whether path.Clean leaves p as it is, but for a
// trailing slash (which the mux keeps). Every unclean form holds "//" or
// "/.", which a token never does: two scans decide the ingestion paths.
func cleanPath(p string) bool {
	if !strings.Contains(p, "//") && !strings.Contains(p, "/.") {
		return true
	}
	return !strings.Contains(p, "//") && !strings.Contains(p, "/./") && !strings.Contains(p, "/../") &&
		!strings.HasSuffix(p, "/.") && !strings.HasSuffix(p, "/..")
}

// bindEarly binds the listener in New when the base URL names port 0 (the
// default base URL with BEET_LISTEN=:0), so that the base URL in links,
// snippets and logs names the port the kernel picked, not 0.
func (a *App) bindEarly() error {
	u, err := url.Parse(a.cfg.BaseURL)
	if err != nil || u.Port() != "0" {
		return nil
	}
	ln, err := server.Listen(a.cfg.Listen)
	if err != nil {
		return err
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	u.Host = net.JoinHostPort(u.Hostname(), port)
	a.cfg.BaseURL = strings.TrimRight(u.String(), "/")
	a.early = ln
	a.onStop("early listener", func(context.Context) error {
		if a.early != nil { // New failed before Start took it
			return a.early.Close()
		}
		return nil
	})
	return nil
}

// Start binds the listeners and starts the background jobs the role runs.
// On error, call Stop to release what New opened.
func (a *App) Start(ctx context.Context) error {
	if err := a.startNotify(); err != nil {
		return err
	}
	if a.early != nil {
		a.server.Serve(a.early)
		a.early = nil
	} else if err := a.server.Open(a.cfg.Listen); err != nil {
		return err
	}
	a.onStop("http", a.server.Shutdown)
	if a.degraded.Load() {
		a.goJob("database check", a.checkDatabase)
	}
	if err := a.startAdmin(); err != nil {
		return err
	}
	if err := a.startDebug(); err != nil {
		return err
	}
	a.startJobs()
	a.announce(ctx)
	return nil
}

// startJobs starts the background jobs the role runs.
func (a *App) startJobs() {
	if a.writer != nil {
		a.startMaintenance() // detection runs in this instance's commits
	}
	if a.noJobs {
		return
	}
	if !a.cfg.RunsJobs() {
		a.log.Info("role ingest: the sweeper, clean-up and outbox run on worker instances")
		return
	}
	a.startSweeper()
	if a.cfg.CleanupInterval > 0 {
		r := &jobs.Retention{
			Cleaner: a.backend.Service,
			Every:   a.cfg.CleanupInterval,
			Now:     a.now,
			Log:     a.log.With("component", "retention"),
		}
		a.goJob("retention", r.Run)
	} else {
		a.log.Info("retention clean-up is off (cleanup interval 0)")
	}
	if a.backend.Store.PartitionsEvents() {
		p := &jobs.Partitions{
			Ensure: func(ctx context.Context, now time.Time) error {
				_, err := a.backend.Store.EnsureEventPartitions(ctx, now, partitionsAhead)
				return err
			},
			Every: time.Hour,
			Now:   a.now,
			Log:   a.log.With("component", "partitions"),
		}
		a.goJob("partitions", p.Run)
	}
}

// partitionsAhead is how many months of events partitions the partition
// job keeps made beyond the current one (PostgreSQL).
const partitionsAhead = 3

// goJob runs fn in a goroutine with its own context, and registers a stop
// step that cancels it and waits for it to return (or for the stop deadline).
// The job's context is not derived from Start's ctx: Stop alone ends jobs,
// so the order of teardown stays the LIFO order.
func (a *App) goJob(name string, fn func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(ctx)
	}()
	a.onStop(name, func(stopCtx context.Context) error {
		cancel()
		select {
		case <-done:
			return nil
		case <-stopCtx.Done():
			return fmt.Errorf("job %s did not stop: %w", name, stopCtx.Err())
		}
	})
}

// URL is the bound listener's URL, such as http://127.0.0.1:41234; empty
// before Start.
func (a *App) URL() string { return a.server.URL() }

// Handler is the public listener's whole handler chain (request logging,
// metrics, base path, routes), to serve in-process.
func (a *App) Handler() http.Handler { return a.server.Handler() }

// Backend returns the app's store and service, for tests and tools.
func (a *App) Backend() *Backend { return a.backend }

// Stop runs the teardown steps in reverse order, each with ctx as its
// deadline, and returns their errors joined. Calling it again does nothing.
func (a *App) Stop(ctx context.Context) error {
	a.mu.Lock()
	if a.stopped {
		a.mu.Unlock()
		return nil
	}
	a.stopped = true
	stops := a.stops
	a.stops = nil
	a.mu.Unlock()

	var errs []error
	for i := len(stops) - 1; i >= 0; i-- {
		s := stops[i]
		if err := s.fn(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", s.name, err))
		}
	}
	return errors.Join(errs...)
}

// Run starts an app and serves until ctx ends (SIGINT or SIGTERM in
// cmd/beet), the HTTP server fails or the database a degraded start
// reaches cannot be used, then stops it within cfg.ShutdownTimeout.
func Run(ctx context.Context, cfg config.Config, opts Options) (err error) {
	a, err := New(ctx, cfg, opts)
	if err != nil {
		return err
	}
	defer func() {
		if cfg.ShutdownDelay > 0 && ctx.Err() != nil {
			// Load balancers see /readyz fail and stop sending before the
			// listener closes: a ping meanwhile is still answered.
			a.stopping.Store(true)
			a.log.Info("not ready; serving on before shutting down", "delay", cfg.ShutdownDelay)
			time.Sleep(cfg.ShutdownDelay)
		}
		// Shutdown has its own deadline: ctx is already done by now.
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
		defer cancel()
		a.log.Info("shutting down", "timeout", cfg.ShutdownTimeout)
		err = errors.Join(err, a.Stop(stopCtx))
		if err == nil {
			a.log.Info("stopped")
		}
	}()
	if err := a.Start(ctx); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-a.server.Err():
		if err != nil {
			return fmt.Errorf("http server: %w", err)
		}
		return nil
	case err := <-a.failed:
		return err
	}
}

// NewLogger returns the slog logger cfg asks for, writing to w.
func NewLogger(w io.Writer, level slog.Level, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
