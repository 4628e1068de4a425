package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/version"
)

// serveCmd runs the service until SIGINT or SIGTERM, then shuts down
// gracefully within the shutdown timeout.
func serveCmd(c *cli, args []string) error {
	fs := c.flags()
	cf := config.Bind(fs, c.getenv)
	if err := c.parse(fs, args); err != nil {
		return err
	}
	cfg, err := c.config(cf)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(c.ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := c.logger(cfg, false)
	log.Info("beet starting", "version", version.String())
	if err := app.Run(ctx, cfg, app.Options{Log: log}); err != nil {
		log.Error("beet stopped with an error", "err", err)
		return err
	}
	return nil
}

// migrateCmd applies pending migrations; OpenBackend does the work.
func migrateCmd(c *cli, args []string) error {
	fs := c.flags()
	cf := config.Bind(fs, c.getenv)
	if err := c.parse(fs, args); err != nil {
		return err
	}
	return c.withBackendFrom(cf, func(b *app.Backend) error {
		return c.printJSON(map[string]string{"engine": b.Store.Engine(), "schema": "current"})
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
