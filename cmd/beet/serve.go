package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/version"
)

// serveCmd runs the service until SIGINT or SIGTERM, then shuts down
// gracefully within the shutdown timeout.
func serveCmd(c *cli, args []string) error {
	cfg, err := c.parseConfig(args)
	if err != nil {
		return err
	}
	// What the adapters would refuse is a bad setting like any other: one
	// line and exit 2, before anything is logged or opened.
	if err := app.CheckConfig(cfg); err != nil {
		return &usageError{msg: err.Error(), bare: true}
	}
	ctx, stop := signal.NotifyContext(c.ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := c.logger(cfg, false)
	// One line for the version and the runtime: the start-up log stays
	// short enough that its last line, where to open Beet, is seen.
	log.Info("beet starting", append([]any{"version", version.String()}, tuneRuntime()...)...)
	if path, err := sqliteMissing(cfg.DatabaseURL); err == nil && path != "" {
		log.Info("creating a new SQLite database", "path", path)
	}
	if err := app.Run(ctx, cfg, app.Options{Log: log}); err != nil {
		log.Error("beet stopped with an error", "err", err)
		return err
	}
	return nil
}

// migrateCmd applies pending migrations; OpenBackend does the work.
func migrateCmd(c *cli, args []string) error {
	cfg, err := c.parseConfig(args)
	if err != nil {
		return err
	}
	// Say which file a new SQLite database went to: the path is relative
	// to wherever the command ran.
	created, err := sqliteMissing(cfg.DatabaseURL)
	if err != nil {
		return err
	}
	return c.withBackend(cfg, func(b *app.Backend) error {
		out := map[string]string{"engine": b.Store.Engine(), "schema": "current"}
		if created != "" {
			out["created"] = created
		}
		return c.printJSON(out)
	})
}

// versionCmd prints the build's version.
func versionCmd(c *cli, args []string) error {
	fs := c.flags()
	if err := c.parse(fs, args); err != nil {
		return err
	}
	_, err := c.stdout.Write([]byte("beet " + version.String() + "\n"))
	return err
}
