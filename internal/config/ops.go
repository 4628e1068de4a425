package config

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// Roles: what one instance runs. Several instances over one PostgreSQL
// database may split the work; the background jobs claim their work in the
// database, so any number of workers can run side by side.
const (
	RoleAll    = "all"    // ingestion, API, dashboard and the background jobs
	RoleIngest = "ingest" // HTTP only: ingestion, API, dashboard
	RoleWorker = "worker" // background jobs only: sweeper, clean-up, outbox
)

// DefaultMetricsListen is the admin listener's default: loopback only, so
// metrics are not public unless the operator says so.
const DefaultMetricsListen = "127.0.0.1:9090"

// MinMetricsToken is the shortest accepted BEET_METRICS_TOKEN: it guards
// an endpoint on the public listener.
const MinMetricsToken = 16

// Bounds of the job timing settings.
const (
	MinSweepInterval = 100 * time.Millisecond
	MaxSweepInterval = time.Minute
	MinDeliveryLease = time.Second
	MaxDeliveryLease = time.Hour
)

// RunsHTTP reports whether the role serves ingestion, the API and the
// dashboard.
func (c Config) RunsHTTP() bool { return c.Role != RoleWorker }

// RunsJobs reports whether the role runs the sweeper, clean-up and outbox.
func (c Config) RunsJobs() bool { return c.Role != RoleIngest }

func init() {
	settings = append(settings, opsSettings...)
}

var opsSettings = []setting{
	{
		env: "BEET_ROLE", flag: "role", def: RoleAll,
		usage: "all, ingest (HTTP: ingestion, API, dashboard) or worker (sweeper, clean-up, outbox)",
		parse: func(c *Config, s string) error { c.Role = strings.ToLower(strings.TrimSpace(s)); return nil },
		check: func(c Config) error {
			switch c.Role {
			case RoleAll:
				return nil
			case RoleIngest, RoleWorker:
				// On SQLite one serving process holds the file (its lock),
				// so the other half of the split could never run: an ingest
				// instance alone sends no alert, a worker alone takes no ping.
				if strings.HasPrefix(c.DatabaseURL, "sqlite://") {
					return errors.New("ingest and worker need PostgreSQL: on SQLite one process serves the file, so use all")
				}
				return nil
			}
			return errors.New("must be all, ingest or worker")
		},
	},
	{
		env: "BEET_METRICS_LISTEN", flag: "metrics-listen", def: DefaultMetricsListen,
		usage: "admin listener for /metrics (host:port, or off)",
		parse: func(c *Config, s string) error { c.MetricsListen = strings.TrimSpace(s); return nil },
		check: func(c Config) error {
			if c.MetricsListen == "off" {
				return nil
			}
			if _, err := listenPort(c.MetricsListen); err != nil {
				return fmt.Errorf("%w, or off", err)
			}
			return nil
		},
	},
	{
		env: "BEET_METRICS_TOKEN", flag: "metrics-token", def: "", secret: true,
		usage: "also serve /metrics on the public listener to requests with this bearer token",
		parse: func(c *Config, s string) error { c.MetricsToken = strings.TrimSpace(s); return nil },
		check: func(c Config) error {
			if c.MetricsToken != "" && len(c.MetricsToken) < MinMetricsToken {
				return fmt.Errorf("must be at least %d characters", MinMetricsToken)
			}
			return nil
		},
	},
	{
		env: "BEET_SWEEP_INTERVAL", flag: "sweep-interval", def: "5s",
		usage: "how often the sweeper looks for passed deadlines (100ms..1m)",
		parse: func(c *Config, s string) (err error) { c.SweepInterval, err = parseDuration(s); return err },
		check: func(c Config) error {
			if c.SweepInterval < MinSweepInterval || c.SweepInterval > MaxSweepInterval {
				return fmt.Errorf("must be from %s to %s", MinSweepInterval, MaxSweepInterval)
			}
			return nil
		},
	},
	{
		env: "BEET_DELIVERY_LEASE", flag: "delivery-lease", def: "2m",
		usage: "how long a claimed notification stays with its instance before another retries it (1s..1h)",
		parse: func(c *Config, s string) (err error) { c.DeliveryLease, err = parseDuration(s); return err },
		check: func(c Config) error {
			if c.DeliveryLease < MinDeliveryLease || c.DeliveryLease > MaxDeliveryLease {
				return fmt.Errorf("must be from %s to %s", MinDeliveryLease, MaxDeliveryLease)
			}
			return nil
		},
	},
}

// MetricsPublic reports whether the admin listener binds beyond loopback.
func (c Config) MetricsPublic() bool {
	if c.MetricsListen == "off" {
		return false
	}
	host, _, err := net.SplitHostPort(c.MetricsListen)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host != "localhost" && (ip == nil || !ip.IsLoopback())
}
