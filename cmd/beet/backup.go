package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/beethq/beet/internal/sqlstore"
)

// backupCmd copies the SQLite database to --output while serve may run,
// verifies the copy and prints what it holds. On PostgreSQL it prints the
// pg_dump line to use instead and fails: no backup was made.
func backupCmd(c *cli, args []string) error {
	fs, cf := c.configFlags()
	output := fs.String("output", "", "file to write the backup to (must not exist)")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if *output == "" {
		return usagef("--output is required")
	}
	cfg, err := c.config(cf)
	if err != nil {
		return err
	}
	rep, err := sqlstore.BackupSQLite(c.ctx, cfg.DatabaseURL, *output)
	if errors.Is(err, sqlstore.ErrBackupPostgres) {
		fmt.Fprintln(c.stdout, sqlstore.PostgresDumpCommand(*output))
		return fmt.Errorf("%w: run the line above (docs/OPERATIONS.md, Care of the data)", err)
	}
	if err != nil {
		return err
	}
	return c.printJSON(rep)
}

// healthcheckCmd asks a running instance whether it is ready (GET /readyz)
// and exits 0 if so: the container health check, in an image with no curl.
func healthcheckCmd(c *cli, args []string) error {
	fs, cf := c.configFlags()
	target := fs.String("url", "", "readiness URL to ask (default: /readyz on BEET_LISTEN, via loopback)")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this long")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	url := *target
	if url == "" {
		cfg, err := c.config(cf)
		if err != nil {
			return err
		}
		url = "http://" + loopbackAddr(cfg.Listen) + "/readyz"
	}
	ctx, cancel := context.WithTimeout(c.ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return usagef("--url %q: %v", url, err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("not ready: %w", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1024))
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("not ready: %s answered %d %s", url, res.StatusCode, strings.TrimSpace(string(body)))
	}
	_, err = fmt.Fprintf(c.stdout, "%s\n", strings.TrimSpace(string(body)))
	return err
}

// loopbackAddr turns a bind address into one to dial from the same host:
// ":8080" and "0.0.0.0:8080" become "127.0.0.1:8080", "[::]:8080" "[::1]:8080".
func loopbackAddr(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return net.JoinHostPort(host, port)
}
