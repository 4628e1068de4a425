package main

import (
	"fmt"
	"io"
	"time"

	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/service"
)

// cleanupCmd runs one retention pass as of --now and reports per plan.
func cleanupCmd(c *cli, args []string) error {
	fs, cf := c.configFlags()
	nowText := fs.String("now", "", "clean up as of this RFC3339 time (default: now)")
	dryRun := fs.Bool("dry-run", false, "count what would be deleted; delete nothing")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	now := time.Now()
	if *nowText != "" {
		t, err := time.Parse(time.RFC3339, *nowText)
		if err != nil {
			return usagef("--now %q is not an RFC3339 time such as 2026-01-31T12:00:00Z", *nowText)
		}
		now = t
	}
	return c.withBackendFrom(cf, func(b *app.Backend) error {
		rep, err := b.Service.Cleanup(c.ctx, now, *dryRun)
		if err != nil {
			return err
		}
		if *asJSON {
			return c.printJSON(rep)
		}
		return printCleanup(c.stdout, rep)
	})
}

// printCleanup writes one line per plan and a total:
//
//	free: deleted 12 events received before 2026-01-01T00:00:00Z
//	total: deleted 12 events
func printCleanup(w io.Writer, rep *service.CleanupReport) error {
	verb := "deleted"
	if rep.DryRun {
		verb = "would delete"
	}
	for _, p := range rep.Plans {
		if _, err := fmt.Fprintf(w, "%s: %s %d %s received before %s\n",
			p.Plan, verb, p.Deleted, events(p.Deleted), p.Cutoff.UTC().Format(time.RFC3339)); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintf(w, "total: %s %d %s\n", verb, rep.Total, events(rep.Total)); err != nil {
		return err
	}
	if rep.PartitionsDropped > 0 {
		_, err := fmt.Fprintf(w, "dropped %d monthly events partitions older than every plan's retention\n", rep.PartitionsDropped)
		return err
	}
	return nil
}

func events(n int64) string {
	if n == 1 {
		return "event"
	}
	return "events"
}
