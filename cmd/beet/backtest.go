package main

import (
	"encoding/json"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/api"
	"github.com/beethq/beet/internal/backtest"
	"github.com/beethq/beet/internal/detect"
	"github.com/beethq/beet/internal/schedule"
)

// backtestCmd replays events from stdin through the detector (CONTRACT
// §4) and prints one JSON line per flip. It needs no database.
func backtestCmd(c *cli, args []string) error {
	fs := c.flags()
	mode := fs.String("mode", "", "auto, period or cron (default: cron when --cron is set, period when --period is, else auto)")
	period := fs.Duration("period", 0, "period mode: an event at least this often (e.g. 1h)")
	grace := fs.Duration("grace", 0, "period and cron modes: how late an event may be")
	cron := fs.String("cron", "", `cron mode: a 5-field expression such as "0 2 * * *"`)
	tz := fs.String("timezone", "UTC", "the beet's IANA time zone: the local day auto mode learns, the zone of a cron expression")
	untilText := fs.String("until", "", "evaluate deadlines up to this RFC3339 time, not before the last event (default: the last event)")
	watching := fs.Bool("watching", false, `after the flips, print one more line: the beet as the replay left it ({"at", "status", "expectation", "watching"}, the API's fields)`)
	if err := c.parse(fs, args); err != nil {
		return err
	}
	d := beet.Detection{Mode: beet.DetectionMode(*mode)}
	if d.Mode == "" {
		switch {
		case *cron != "":
			d.Mode = beet.ModeCron
		case *period != 0:
			d.Mode = beet.ModePeriod
		default:
			d.Mode = beet.ModeAuto
		}
	}
	// A flag of another mode is refused, as the API refuses its field: a
	// replay in auto mode that silently dropped --period would not be the
	// replay asked for.
	switch d.Mode {
	case beet.ModeAuto:
		if *period != 0 || *grace != 0 || *cron != "" {
			return usagef("--period, --grace and --cron are not used in auto mode")
		}
	case beet.ModePeriod:
		if *cron != "" {
			return usagef("--cron is not used in period mode")
		}
		d.PeriodSeconds, d.GraceSeconds = int64(period.Seconds()), int64(grace.Seconds())
	case beet.ModeCron:
		if *period != 0 {
			return usagef("--period is not used in cron mode")
		}
		d.Cron, d.Timezone, d.GraceSeconds = *cron, *tz, int64(grace.Seconds())
	}
	if err := d.Validate(); err != nil {
		return detectionFlagError(err, *mode, *cron, *period, *grace)
	}
	// The beet's own zone, as a live beet has one: auto mode learns its
	// rhythm by the hours and days of this zone.
	if err := beet.ValidateTimezone("--timezone", *tz); err != nil {
		return usagef("%s", beet.ErrorMessageWithField(err))
	}
	if d.Mode == beet.ModeCron {
		if _, err := schedule.ParseCron(d.Cron); err != nil {
			return usagef("--cron %q: %v", d.Cron, err)
		}
	}
	points, err := backtest.Parse(c.stdin)
	if err != nil {
		return err
	}
	var until, last time.Time
	if len(points) > 0 {
		last = points[len(points)-1].At
	}
	if *untilText == "" {
		until = last
	} else if until, err = time.Parse(time.RFC3339, *untilText); err != nil {
		return usagef("--until %q is not an RFC3339 time such as 2026-01-31T12:00:00Z", *untilText)
	} else if until.Before(last) {
		return usagef("--until %s is before the last event (%s): it carries the replay on past the events, it does not cut them",
			until.UTC().Format(time.RFC3339), last.UTC().Format(time.RFC3339))
	}
	flips, final, err := backtest.Run(beet.Beet{Timezone: *tz, Detection: d}, points, until)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(c.stdout)
	for _, f := range flips {
		if err := enc.Encode(struct {
			At     string        `json:"at"`
			From   beet.Status   `json:"from"`
			To     beet.Status   `json:"to"`
			Kind   beet.FlipKind `json:"kind"`
			Reason string        `json:"reason"`
		}{f.At.UTC().Format(time.RFC3339), f.From, f.To, f.Kind, f.Reason}); err != nil {
			return err
		}
	}
	if !*watching || len(points) == 0 {
		return nil
	}
	// What the replay learned, as the beet's page and the API would show
	// it at until: the flips say only what it said when it changed state
	// (a schedule's first words, while its days were not known yet).
	return enc.Encode(struct {
		At          string            `json:"at"`
		Status      beet.Status       `json:"status"`
		Expectation string            `json:"expectation"`
		Watching    *api.WatchingJSON `json:"watching"`
	}{until.UTC().Format(time.RFC3339), final.Status, detect.Expectation(&final), api.Watching(&final)})
}

// detectionFlagError words what Detection.Validate refused in this
// command's flags: the API's field names (detection.period_seconds) and
// its seconds mean nothing on a command line that takes --period 1h.
func detectionFlagError(err error, mode, cron string, period, grace time.Duration) error {
	switch beet.ErrorField(err) {
	case "detection.period_seconds":
		if period == 0 {
			return usagef("--period is required in period mode: from %s to %s, such as --period 1h",
				detect.Duration(beet.MinPeriod), detect.Duration(beet.MaxPeriod))
		}
		return usagef("--period %s: must be from %s to %s", period, detect.Duration(beet.MinPeriod), detect.Duration(beet.MaxPeriod))
	case "detection.grace_seconds":
		return usagef("--grace %s: must be from 0 to %s", grace, detect.Duration(beet.MaxGrace))
	case "detection.cron":
		if cron == "" {
			return usagef("--cron is required in cron mode, such as --cron \"0 2 * * *\"")
		}
		return usagef("--cron: %s", beet.ErrorMessage(err))
	case "detection.mode":
		return usagef("--mode %q: want auto, period or cron", mode)
	}
	return usagef("%s", beet.ErrorMessageWithField(err))
}
