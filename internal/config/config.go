// Package config turns the BEET_* environment and command-line flags into
// one validated Config value. It is parsed once in cmd/beet and passed down;
// nothing else in Beet reads the environment.
//
// Every setting has an environment variable and a flag; a flag given on the
// command line wins over the variable, and the variable over the default.
//
//	Variable               Flag                 Default                 Meaning
//	BEET_DATABASE_URL      --database-url       sqlite://beet.db        sqlite:///abs/path.db, sqlite://rel/path.db or postgres://user:pass@host/db
//	BEET_LISTEN            --listen             :8080                   address the HTTP server binds (host:port; port 0 picks a free one)
//	BEET_BASE_URL          --base-url           http://localhost:<port> public URL of this service, used in links it hands out
//	BEET_LOG_LEVEL         --log-level          info                    debug, info, warn or error
//	BEET_LOG_FORMAT        --log-format         text                    text or json (log/slog handlers, on stderr)
//	BEET_CLEANUP_INTERVAL  --cleanup-interval   10m                     how often serve runs the retention clean-up (Go duration, 1m to 6h; 0 turns it off)
//	BEET_CLEANUP_BATCH     --cleanup-batch      1000                    events deleted per short transaction by the clean-up (1 to 10000)
//	BEET_SHUTDOWN_TIMEOUT  --shutdown-timeout   15s                     how long serve waits for requests and jobs to finish on SIGTERM/SIGINT
//	BEET_SHUTDOWN_DELAY    --shutdown-delay     0s                      on SIGTERM, how long serve keeps serving with /readyz at 503 first, so load balancers stop sending (0 to 5m)
//	BEET_CONNECT_WAIT      --connect-wait       1m                      how long serve retries a PostgreSQL it cannot reach at start (0 to 1h; 0 gives up at once; not ingest)
//	BEET_REDIS_URL         --redis-url          (none)                  redis://host:6379/0: share the ingestion rate limit across instances
//	BEET_SPOOL_PATH        --spool-path         <db file>.spool         local file that keeps events while the database is down (PostgreSQL: ./beet.spool)
//	BEET_INGEST_BATCH      --ingest-batch       256                     most events committed in one ingestion transaction (1 to 10000)
//	BEET_INGEST_WAIT       --ingest-wait        0s                      how long a commit group waits to fill (0 to 100ms; 0 takes what is queued)
//	BEET_INGEST_LANES      --ingest-lanes       0                       ingestion commits under way at once, events shared by beet (0: 1; more only on PostgreSQL with cores of its own; up to 16)
//	BEET_INGEST_FSYNC      --ingest-fsync       commit                  SQLite: commit (fsync inside each commit) or overlap (Linux: the WAL's fsync runs beside the next commit; a request is answered after it)
//	BEET_SMTP_URL          --smtp-url           (none)                  mail server for email channels: smtp://user:pass@host:587?from=alerts@example.com (smtps:// for TLS on connect)
//	BEET_ALLOW_PRIVATE_TARGETS --allow-private-targets false           let channels post to loopback, private and link-local addresses (self-hosted, alerting inside the network)
//	BEET_SIGNUP            --signup             closed                  closed or open: whether anyone may create an account from the dashboard after the first-run setup
//	BEET_TRUSTED_PROXIES   --trusted-proxies    (none)                  comma-separated addresses or CIDRs of reverse proxies whose X-Forwarded-For is believed (for sign-in throttling)
//	BEET_ROLE              --role               all                     all, ingest (HTTP: ingestion, API, dashboard) or worker (sweeper, clean-up, outbox)
//	BEET_METRICS_LISTEN    --metrics-listen     127.0.0.1:9090          admin listener for /metrics (host:port, or off)
//	BEET_METRICS_TOKEN     --metrics-token      (none)                  also serve /metrics on the public listener to requests bearing this token (16+ characters)
//	BEET_SWEEP_INTERVAL    --sweep-interval     5s                      how often the sweeper looks for passed deadlines (100ms to 1m)
//	BEET_DELIVERY_LEASE    --delivery-lease     2m                      how long a claimed notification is an instance's own before another may retry it (1s to 1h)
//	BEET_CONFIG            --config             (none)                  a settings file (TOML or YAML, flat, the same names); see file.go
//
// Precedence: flag, then environment variable, then the settings file, then
// the default.
//
//	BEET_DEBUG_LISTEN      --debug-listen       (none)                  loopback host:port serving Go's profiler at /debug/pprof/ (off when empty)
//
// Every bad setting gives one error that names its variable and flag; all of
// them are reported together, on one line, so an operator fixes them in one go.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Config is Beet's runtime configuration. The zero value is not valid; start
// from Default or Load.
type Config struct {
	// DatabaseURL selects the store: sqlite://… or postgres://….
	DatabaseURL string
	// Listen is the HTTP server's bind address.
	Listen string
	// BaseURL is the public URL of the service, without a trailing slash.
	BaseURL string
	// LogLevel is the minimum level logged.
	LogLevel slog.Level
	// LogFormat is "text" or "json".
	LogFormat string
	// CleanupInterval is the period of the retention job in serve; 0 turns it off.
	CleanupInterval time.Duration
	// CleanupBatch bounds how many events one clean-up transaction deletes.
	CleanupBatch int
	// ShutdownTimeout bounds a graceful shutdown.
	ShutdownTimeout time.Duration
	// ShutdownDelay is how long serve keeps serving after SIGTERM, not
	// ready, before it shuts down: load balancers stop routing to it first.
	ShutdownDelay time.Duration
	// ConnectWait bounds how long serve retries an unreachable PostgreSQL
	// at start; 0 gives up at once. The ingest role does not wait: it
	// starts degraded, spooling pings (internal/app).
	ConnectWait time.Duration
	// RedisURL, when set, shares the ingestion rate limit across instances.
	RedisURL string
	// SpoolPath is the ingestion spool file; empty derives it from the database.
	SpoolPath string
	// IngestBatch bounds the events of one ingestion commit.
	IngestBatch int
	// IngestWait is how long a commit group waits to fill.
	IngestWait time.Duration
	// IngestLanes is how many ingestion commits may be under way at once;
	// 0 takes the engine's default.
	IngestLanes int
	// IngestFsync is IngestFsyncCommit (or empty) or IngestFsyncOverlap:
	// where an ingestion commit's fsync runs on SQLite.
	IngestFsync string
	// IngestAck is IngestAckCommit (or empty) or IngestAckJournal: when an
	// ingestion request is answered.
	IngestAck string
	// SMTPURL is the mail server of email channels; empty turns them off.
	SMTPURL string
	// AllowPrivateTargets lets channels reach private addresses.
	AllowPrivateTargets bool
	// SignupOpen lets anyone create an account from the dashboard; when
	// false only the first-run setup (and the CLI) creates accounts.
	SignupOpen bool
	// TrustedProxies lists the reverse proxies (addresses or CIDRs, comma
	// separated) whose X-Forwarded-For names the client; see ParseProxies.
	TrustedProxies string
	// Role says what this instance runs: RoleAll, RoleIngest or RoleWorker.
	Role string
	// MetricsListen is the admin listener serving /metrics; "off" disables it.
	MetricsListen string
	// MetricsToken, when set, also serves /metrics on the public listener
	// to requests with "Authorization: Bearer <token>".
	MetricsToken string
	// SweepInterval is how often the deadline sweeper runs.
	SweepInterval time.Duration
	// DeliveryLease is how long a claimed delivery stays with its instance.
	DeliveryLease time.Duration
	// DebugListen, when set, serves net/http/pprof on this loopback
	// address: never on the public listener, since profiles expose memory.
	DebugListen string
	// SecretKey seals channel secrets at rest; SecretKeyOld lists the
	// keys before a rotation (secretkey.go).
	SecretKey, SecretKeyOld string
}

// The values of IngestFsync.
const (
	IngestFsyncOverlap = "overlap"
	IngestFsyncCommit  = "commit"
)

// The values of IngestAck.
const (
	IngestAckCommit  = "commit"
	IngestAckJournal = "journal"
)

// Limits checked by Validate.
const (
	MinCleanupInterval = time.Minute
	// MaxCleanupInterval keeps passes within the BeetRetentionStale
	// alert's 6 h, and a typo (1000000h) from turning clean-up off.
	MaxCleanupInterval = 6 * time.Hour
	MinCleanupBatch    = 1
	MaxCleanupBatch    = 10000
	MaxIngestBatch     = 10000
	MaxIngestWait      = 100 * time.Millisecond
	MaxIngestLanes     = 16
)

// Default returns the configuration used when nothing is set.
func Default() Config {
	return Config{
		DatabaseURL:     "sqlite://beet.db",
		Listen:          ":8080",
		BaseURL:         "http://localhost:8080",
		LogLevel:        slog.LevelInfo,
		LogFormat:       "text",
		CleanupInterval: 10 * time.Minute,
		CleanupBatch:    1000,
		ShutdownTimeout: 15 * time.Second,
		ConnectWait:     time.Minute,
		IngestBatch:     256,
		IngestFsync:     IngestFsyncCommit,
		IngestAck:       IngestAckCommit,
		Role:            RoleAll,
		MetricsListen:   DefaultMetricsListen,
		SweepInterval:   5 * time.Second,
		DeliveryLease:   2 * time.Minute,
	}
}

// setting ties one Config field to its variable and flag. parse reads the
// text form (syntax only); check tests the parsed value's bounds, so Validate
// can run the same checks on a Config built in code.
type setting struct {
	env, flag, def, usage string
	secret                bool // never echo the value: it may hold a password
	parse                 func(c *Config, s string) error
	check                 func(c Config) error
}

var settings = []setting{
	{
		env: "BEET_DATABASE_URL", flag: "database-url", def: "sqlite://beet.db", secret: true,
		usage: "database: sqlite:///abs/path.db, sqlite://rel/path.db or postgres://…",
		parse: func(c *Config, s string) error { c.DatabaseURL = s; return nil },
		check: func(c Config) error { return checkDatabaseURL(c.DatabaseURL) },
	},
	{
		env: "BEET_LISTEN", flag: "listen", def: ":8080",
		usage: "HTTP bind address (host:port)",
		parse: func(c *Config, s string) error { c.Listen = s; return nil },
		check: func(c Config) error { _, err := listenPort(c.Listen); return err },
	},
	{
		env: "BEET_BASE_URL", flag: "base-url", def: "",
		usage: "public URL of this service (default http://localhost:<listen port>)",
		parse: func(c *Config, s string) error { c.BaseURL = strings.TrimRight(s, "/"); return nil },
		check: func(c Config) error { return checkBaseURL(c.BaseURL) },
	},
	{
		env: "BEET_LOG_LEVEL", flag: "log-level", def: "info",
		usage: "debug, info, warn or error",
		parse: func(c *Config, s string) (err error) { c.LogLevel, err = parseLevel(s); return err },
		check: func(Config) error { return nil }, // every slog.Level is usable
	},
	{
		env: "BEET_LOG_FORMAT", flag: "log-format", def: "text",
		usage: "text or json",
		parse: func(c *Config, s string) error { c.LogFormat = strings.ToLower(s); return nil },
		check: func(c Config) error {
			if c.LogFormat != "text" && c.LogFormat != "json" {
				return fmt.Errorf("must be text or json")
			}
			return nil
		},
	},
	{
		env: "BEET_CLEANUP_INTERVAL", flag: "cleanup-interval", def: "10m",
		usage: "retention clean-up period in serve (Go duration, 1m to 6h; 0 turns it off)",
		parse: func(c *Config, s string) (err error) { c.CleanupInterval, err = parseDuration(s); return err },
		check: func(c Config) error {
			if d := c.CleanupInterval; d != 0 && (d < MinCleanupInterval || d > MaxCleanupInterval) {
				return fmt.Errorf("must be 0 (off) or from %s to %s", MinCleanupInterval, MaxCleanupInterval)
			}
			return nil
		},
	},
	{
		env: "BEET_CLEANUP_BATCH", flag: "cleanup-batch", def: "1000",
		usage: "events deleted per clean-up transaction (1..10000)",
		parse: func(c *Config, s string) (err error) {
			c.CleanupBatch, err = strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				return errors.New("is not a whole number")
			}
			return nil
		},
		check: func(c Config) error {
			if c.CleanupBatch < MinCleanupBatch || c.CleanupBatch > MaxCleanupBatch {
				return fmt.Errorf("must be from %d to %d", MinCleanupBatch, MaxCleanupBatch)
			}
			return nil
		},
	},
	{
		env: "BEET_SHUTDOWN_DELAY", flag: "shutdown-delay", def: "0s",
		usage: "on SIGTERM, serve on with /readyz at 503 this long before shutting down (Go duration, 0 to 5m)",
		parse: func(c *Config, s string) (err error) { c.ShutdownDelay, err = parseDuration(s); return err },
		check: func(c Config) error {
			if c.ShutdownDelay < 0 || c.ShutdownDelay > MaxShutdownDelay {
				return fmt.Errorf("must be from 0 to %s", MaxShutdownDelay)
			}
			return nil
		},
	},
	{
		env: "BEET_CONNECT_WAIT", flag: "connect-wait", def: "1m",
		usage: "how long serve retries an unreachable PostgreSQL at start (Go duration, 0 to 1h; 0 gives up at once; the ingest role starts degraded instead)",
		parse: func(c *Config, s string) (err error) { c.ConnectWait, err = parseDuration(s); return err },
		check: func(c Config) error {
			if c.ConnectWait < 0 || c.ConnectWait > MaxConnectWait {
				return fmt.Errorf("must be from 0 to %s", MaxConnectWait)
			}
			return nil
		},
	},
	{
		env: "BEET_SHUTDOWN_TIMEOUT", flag: "shutdown-timeout", def: "15s",
		usage: "graceful shutdown limit (Go duration, > 0)",
		parse: func(c *Config, s string) (err error) { c.ShutdownTimeout, err = parseDuration(s); return err },
		check: func(c Config) error {
			// An orchestrator kills a process that outlives its own grace
			// period (Kubernetes: 30 s by default) anyway; an hour is the
			// most any drain could use, and a typo (1000000h) is refused.
			if c.ShutdownTimeout <= 0 || c.ShutdownTimeout > MaxShutdownTimeout {
				return fmt.Errorf("must be greater than 0 and at most %s", MaxShutdownTimeout)
			}
			return nil
		},
	},
	{
		env: "BEET_REDIS_URL", flag: "redis-url", def: "", secret: true,
		usage: "redis://host:6379/0 to share the ingestion rate limit across instances",
		parse: func(c *Config, s string) error { c.RedisURL = strings.TrimSpace(s); return nil },
		check: func(c Config) error {
			if c.RedisURL == "" {
				return nil
			}
			u, err := url.Parse(c.RedisURL)
			if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
				return errors.New("must look like redis://host:6379/0 (or rediss:// for TLS)")
			}
			return nil
		},
	},
	{
		env: "BEET_SPOOL_PATH", flag: "spool-path", def: "",
		usage: "file that keeps events while the database is down (default: next to the SQLite file, or ./beet.spool)",
		parse: func(c *Config, s string) error { c.SpoolPath = s; return nil },
		check: func(Config) error { return nil },
	},
	{
		env: "BEET_INGEST_BATCH", flag: "ingest-batch", def: "256",
		usage: "most events in one ingestion commit (1..10000)",
		parse: func(c *Config, s string) (err error) {
			c.IngestBatch, err = strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				return errors.New("is not a whole number")
			}
			return nil
		},
		check: func(c Config) error {
			if c.IngestBatch < 1 || c.IngestBatch > MaxIngestBatch {
				return fmt.Errorf("must be from 1 to %d", MaxIngestBatch)
			}
			return nil
		},
	},
	{
		env: "BEET_INGEST_WAIT", flag: "ingest-wait", def: "0s",
		usage: "how long an ingestion commit group waits to fill (0..100ms)",
		parse: func(c *Config, s string) (err error) { c.IngestWait, err = parseDuration(s); return err },
		check: func(c Config) error {
			if c.IngestWait < 0 || c.IngestWait > MaxIngestWait {
				return fmt.Errorf("must be from 0 to %s", MaxIngestWait)
			}
			return nil
		},
	},
	{
		env: "BEET_INGEST_LANES", flag: "ingest-lanes", def: "0",
		usage: "ingestion commits under way at once, events shared among them by beet (0: 1; more only on PostgreSQL with cores of its own; 0..16)",
		parse: func(c *Config, s string) (err error) {
			c.IngestLanes, err = strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				return errors.New("is not a whole number")
			}
			return nil
		},
		check: func(c Config) error {
			if c.IngestLanes < 0 || c.IngestLanes > MaxIngestLanes {
				return fmt.Errorf("must be from 0 to %d", MaxIngestLanes)
			}
			return nil
		},
	},
	{
		env: "BEET_INGEST_FSYNC", flag: "ingest-fsync", def: IngestFsyncCommit,
		usage: "SQLite: commit (SQLite fsyncs inside each commit) or overlap (Linux: the WAL's fsync runs beside the next commit; a request is still answered only after its event's fsync)",
		parse: func(c *Config, s string) error { c.IngestFsync = strings.ToLower(strings.TrimSpace(s)); return nil },
		check: func(c Config) error {
			switch c.IngestFsync {
			case "", IngestFsyncCommit, IngestFsyncOverlap: // "": commit, as in a Config built in code
			default:
				return fmt.Errorf("must be %s or %s", IngestFsyncCommit, IngestFsyncOverlap)
			}
			return nil
		},
	},
	{
		env: "BEET_INGEST_ACK", flag: "ingest-ack", def: IngestAckCommit,
		usage: "when a ping is answered: commit (once its database commit is durable) or journal (once it is fsync'd in the local spool file; the database takes it right after)",
		parse: func(c *Config, s string) error { c.IngestAck = strings.ToLower(strings.TrimSpace(s)); return nil },
		check: func(c Config) error {
			switch c.IngestAck {
			case "", IngestAckCommit: // "": commit, as in a Config built in code
			case IngestAckJournal:
				if c.IngestLanes > 1 || c.IngestFsync == IngestFsyncOverlap {
					return errors.New("journal answers from one append to the spool: set BEET_INGEST_LANES to 0 or 1 and BEET_INGEST_FSYNC to commit")
				}
			default:
				return fmt.Errorf("must be %s or %s", IngestAckCommit, IngestAckJournal)
			}
			return nil
		},
	},
	{
		env: "BEET_SMTP_URL", flag: "smtp-url", def: "", secret: true,
		usage: "mail server for email channels: smtp://user:pass@host:587?from=alerts@example.com (smtps:// for TLS on connect; tls=opportunistic|none)",
		parse: func(c *Config, s string) error { c.SMTPURL = strings.TrimSpace(s); return nil },
		check: func(c Config) error { return checkSMTPURL(c.SMTPURL) },
	},
	{
		env: "BEET_ALLOW_PRIVATE_TARGETS", flag: "allow-private-targets", def: "false",
		usage: "let channels post to loopback, private and link-local addresses (true or false)",
		parse: func(c *Config, s string) (err error) {
			c.AllowPrivateTargets, err = strconv.ParseBool(strings.TrimSpace(s))
			if err != nil {
				return errors.New("must be true or false")
			}
			return nil
		},
		check: func(Config) error { return nil },
	},
	{
		env: "BEET_SIGNUP", flag: "signup", def: "closed",
		usage: "closed or open: may anyone create an account from the dashboard",
		parse: func(c *Config, s string) error {
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "closed":
				c.SignupOpen = false
			case "open":
				c.SignupOpen = true
			default:
				return errors.New("must be closed or open")
			}
			return nil
		},
		check: func(Config) error { return nil },
	},
	{
		env: "BEET_TRUSTED_PROXIES", flag: "trusted-proxies", def: "",
		usage: "reverse proxies (addresses or CIDRs, comma separated) whose X-Forwarded-For is believed",
		parse: func(c *Config, s string) error { c.TrustedProxies = strings.TrimSpace(s); return nil },
		check: func(c Config) error { _, err := ParseProxies(c.TrustedProxies); return err },
	},
	{
		env: "BEET_DEBUG_LISTEN", flag: "debug-listen", def: "",
		usage: "loopback host:port serving the Go profiler at /debug/pprof/ (empty: off)",
		parse: func(c *Config, s string) error { c.DebugListen = strings.TrimSpace(s); return nil },
		check: func(c Config) error { return checkLoopback(c.DebugListen) },
	},
}

// checkLoopback accepts an empty address or a loopback host:port: the
// profiler shows memory contents, so it must not face the network.
func checkLoopback(addr string) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("must be host:port, such as 127.0.0.1:6060")
	}
	if _, err := listenPort(addr); err != nil {
		return err
	}
	if ip, err := netip.ParseAddr(host); host != "localhost" && (err != nil || !ip.IsLoopback()) {
		return errors.New("must be a loopback address, such as 127.0.0.1:6060")
	}
	return nil
}

// checkSMTPURL checks the shape of BEET_SMTP_URL; notify parses it fully.
// MaxShutdownTimeout bounds BEET_SHUTDOWN_TIMEOUT.
const MaxShutdownTimeout = time.Hour

// MaxShutdownDelay bounds BEET_SHUTDOWN_DELAY: load balancers notice a
// failing probe within seconds; minutes are a typo.
const MaxShutdownDelay = 5 * time.Minute

// MaxConnectWait bounds BEET_CONNECT_WAIT.
const MaxConnectWait = time.Hour

func checkSMTPURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Hostname() == "" {
		return errors.New("must look like smtp://user:pass@host:587?from=alerts@example.com (or smtps://)")
	}
	if u.Query().Get("from") == "" {
		return errors.New("needs from=address, the sender of alert emails")
	}
	return nil
}

// SettingError is what is wrong with one setting. Value is empty for secret
// settings so that a password in a URL never reaches a terminal or log.
type SettingError struct {
	Env, Flag, Value string
	Err              error
}

func (e *SettingError) Error() string {
	if e.Value != "" {
		return fmt.Sprintf("%s (--%s) = %q: %v", e.Env, e.Flag, e.Value, e.Err)
	}
	return fmt.Sprintf("%s (--%s): %v", e.Env, e.Flag, e.Err)
}

func (e *SettingError) Unwrap() error { return e.Err }

// Errors holds one SettingError per bad setting. It prints on one line, as
// the CLI contract wants errors on one line of stderr.
type Errors []*SettingError

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return "invalid configuration: " + strings.Join(parts, "; ")
}

// Unwrap lets errors.As find each SettingError.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

func newSettingError(s setting, value string, err error) *SettingError {
	if s.secret {
		value = ""
	}
	return &SettingError{Env: s.env, Flag: s.flag, Value: value, Err: err}
}

// Validate checks every setting's bounds and returns Errors, or nil.
func (c Config) Validate() error {
	var errs Errors
	for _, s := range settings {
		if err := s.check(c); err != nil {
			errs = append(errs, newSettingError(s, "", err))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// flagValue records a flag's text and whether it was given, so that an
// unset flag falls back to the environment and -help shows the built-in
// defaults rather than the environment's (possibly secret) values.
type flagValue struct {
	s   string
	set bool
}

func (v *flagValue) String() string     { return v.s }
func (v *flagValue) Set(s string) error { v.s, v.set = s, true; return nil }

// Flags are the configuration flags bound to one FlagSet. Commands add their
// own flags to the same FlagSet, parse it, then call Config.
type Flags struct {
	getenv func(string) string
	values []*flagValue
	file   *flagValue // --config
}

// Bind registers a flag for every setting on fs, and --config for a
// settings file. getenv is os.Getenv in production and a map lookup in
// tests.
func Bind(fs *flag.FlagSet, getenv func(string) string) *Flags {
	f := &Flags{getenv: getenv, file: &flagValue{}}
	for _, s := range settings {
		v := &flagValue{s: s.def}
		f.values = append(f.values, v)
		usage := s.usage + " [$" + s.env + "]"
		fs.Var(v, s.flag, usage)
	}
	fs.Var(f.file, "config", "settings file, TOML (KEY = \"value\") or YAML (KEY: value), with the BEET_* names [$BEET_CONFIG]")
	return f
}

// Source says where a setting's value came from.
type Source string

// Sources, from strongest to weakest.
const (
	FromFlag    Source = "flag"
	FromEnv     Source = "env"
	FromFile    Source = "file"
	FromDefault Source = "default"
)

// resolved is one setting's raw text and where it came from.
type resolved struct {
	raw    string
	source Source
}

// resolve picks each setting's text: flag, else variable, else the
// settings file, else the default.
func (f *Flags) resolve() ([]resolved, error) {
	file, err := f.readFile()
	if err != nil {
		return nil, err
	}
	out := make([]resolved, len(settings))
	for i, s := range settings {
		out[i] = resolved{s.def, FromDefault}
		if v, ok := file[s.env]; ok {
			out[i] = resolved{v, FromFile}
		}
		if env := f.getenv(s.env); env != "" {
			out[i] = resolved{env, FromEnv}
		}
		if f.values[i].set {
			out[i] = resolved{f.values[i].s, FromFlag}
		}
	}
	return out, nil
}

// Config resolves each setting (flag, else variable, else file, else
// default), parses and validates it, and returns the Config or Errors with
// one entry per bad setting. Call it after fs.Parse.
func (f *Flags) Config() (Config, error) {
	res, err := f.resolve()
	if err != nil {
		return Config{}, err
	}
	c, errs := build(res)
	if len(errs) > 0 {
		return Config{}, errs
	}
	return c, nil
}

// build parses and checks the resolved texts; errs has one entry per bad
// setting, in table order.
func build(res []resolved) (Config, Errors) {
	var c Config
	var errs Errors
	bad := make([]bool, len(settings))
	for i, s := range settings {
		if err := s.parse(&c, res[i].raw); err != nil {
			errs = append(errs, newSettingError(s, res[i].raw, err))
			bad[i] = true
		}
	}
	if c.BaseURL == "" {
		// The default follows the listen port, so `--listen :9090` alone
		// gives working links.
		if port, err := listenPort(c.Listen); err == nil {
			c.BaseURL = "http://localhost:" + port
		} else {
			// Derived from a bad BEET_LISTEN, which is reported already.
			bad[settingIndex("BEET_BASE_URL")] = true
		}
	}
	for i, s := range settings {
		if bad[i] {
			continue
		}
		if err := s.check(c); err != nil {
			errs = append(errs, newSettingError(s, res[i].raw, err))
		}
	}
	return c, errs
}

func settingIndex(env string) int {
	for i, s := range settings {
		if s.env == env {
			return i
		}
	}
	panic("config: no setting " + env)
}

// Load parses args (flags only, no positional arguments) over the
// environment; for a command without flags of its own.
func Load(args []string, getenv func(string) string) (Config, error) {
	fs := flag.NewFlagSet("beet", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := Bind(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return f.Config()
}

func parseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, errors.New("must be debug, info, warn or error")
}

func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("is not a duration such as 30s, 10m or 1h")
	}
	return d, nil
}

func checkDatabaseURL(s string) error {
	switch {
	case strings.HasPrefix(s, "sqlite://"):
		path := strings.TrimPrefix(s, "sqlite://")
		if i := strings.IndexByte(path, '?'); i >= 0 {
			path = path[:i]
		}
		if path == "" || path == "/" {
			return errors.New("sqlite URL needs a file path: sqlite:///abs/path.db or sqlite://rel/path.db")
		}
		return nil
	case strings.HasPrefix(s, "postgres://"), strings.HasPrefix(s, "postgresql://"):
		if _, err := url.Parse(s); err != nil {
			return errors.New("is not a valid postgres:// URL")
		}
		return nil
	case s == "":
		return errors.New("is required")
	}
	return errors.New("must start with sqlite:// or postgres://")
}

// listenPort returns the port of a host:port address.
func listenPort(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", errors.New("must be host:port, such as :8080 or 127.0.0.1:8080")
	}
	if host != "" && net.ParseIP(host) == nil && !hostName(host) {
		return "", fmt.Errorf("host %q is neither an IP address nor a host name", host)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return "", errors.New("port must be a number from 0 to 65535")
	}
	return port, nil
}

// hostName: letters, digits, hyphens and dots, with a letter somewhere
// (999.1.1.1 is a mistyped address, not a name).
func hostName(h string) bool {
	letter := false
	for _, r := range h {
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			letter = true
		case r >= '0' && r <= '9' || r == '-' || r == '.':
		default:
			return false
		}
	}
	return letter && len(h) <= 253
}

func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("must be an absolute http:// or https:// URL")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return errors.New("must not have a query, fragment or user info")
	}
	return nil
}

// MaxTrustedProxies bounds BEET_TRUSTED_PROXIES.
const MaxTrustedProxies = 100

// ParseProxies reads a comma-separated list of addresses ("10.0.0.7") and
// CIDRs ("10.0.0.0/8") into prefixes.
func ParseProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if len(out) == MaxTrustedProxies {
			return nil, fmt.Errorf("more than %d entries", MaxTrustedProxies)
		}
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address or CIDR", part)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}
