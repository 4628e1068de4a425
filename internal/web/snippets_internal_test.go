package web

import (
	"strings"
	"testing"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/schedule"
)

// The crontab line a beet's page offers keeps that beet up when copied:
// a cron beet's own schedule (its zone named in a comment), a period beet's
// least frequent common schedule within the period, an example in auto
// mode. And the curl lines print nothing, so `curl … && next` goes on in a
// terminal.
func TestCronLineFitsTheBeet(t *testing.T) {
	for _, c := range []struct {
		d    beet.Detection
		line string
	}{
		{beet.Detection{Mode: beet.ModeCron, Cron: "*/5 * * * *", Timezone: "UTC"}, "*/5 * * * *"},
		{beet.Detection{Mode: beet.ModeCron, Cron: "30 6 * * 1-5", Timezone: "Europe/Riga"},
			"# in Europe/Riga time: cron reads the line on the machine's clock\n30 6 * * 1-5"},
		{beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 120}, "*/2 * * * *"},
		{beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600}, "0 * * * *"},
		{beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 5400}, "0 * * * *"},
		{beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 6 * 3600}, "0 */6 * * *"},
		{beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 25 * 3600}, "0 2 * * *"},
		{beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 30}, "* * * * *"},
		{beet.Detection{Mode: beet.ModeAuto}, "0 2 * * *"},
	} {
		if got, _, _ := cronLine(c.d); got != c.line {
			t.Errorf("%+v: %q, want %q", c.d, got, c.line)
		}
	}
	url := "https://beet.example.com/api/v1/beet/bt_x"
	for _, s := range append(snippets(url, "bt_x", beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600}),
		startSnippets(url, "bt_x", beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600})...) {
		if strings.Contains(s.Text, "curl -fsS") && !strings.Contains(s.Text, "-o /dev/null") && !strings.Contains(s.Text, "> /dev/null") {
			t.Errorf("%s: curl prints the GIF: %s", s.ID, s.Text)
		}
		if (s.ID == "cron" || s.ID == "crontab") && !strings.HasPrefix(s.Text, "0 * * * * ") {
			t.Errorf("%s: an hourly beet's cron line: %s", s.ID, s.Text)
		}
	}
}

// Every crontab line the pages offer is one Debian's cron runs: no
// CRON_TZ= (which it ignores), and no L, W or # (which it refuses). A cron
// beet on such a schedule gets a shell line after a comment that says so.
func TestCronLinesRunInDebianCron(t *testing.T) {
	url := "https://beet.example.com/api/v1/beet/bt_x"
	for _, d := range []beet.Detection{
		{Mode: beet.ModeCron, Cron: "30 6 * * 1-5", Timezone: "Europe/Riga"},
		{Mode: beet.ModeCron, Cron: "0 12 L * *", Timezone: "UTC"},
		{Mode: beet.ModeCron, Cron: "0 9 * * MON#1", Timezone: "America/New_York"},
		{Mode: beet.ModeCron, Cron: "@daily", Timezone: "UTC"},
		{Mode: beet.ModePeriod, PeriodSeconds: 6 * 3600},
		{Mode: beet.ModeAuto},
	} {
		for _, s := range append(snippets(url, "bt_x", d), startSnippets(url, "bt_x", d)...) {
			if s.ID != "cron" && s.ID != "crontab" {
				continue
			}
			if strings.Contains(s.Text, "CRON_TZ") {
				t.Errorf("%+v: %s offers CRON_TZ=: %q", d, s.ID, s.Text)
			}
			for _, line := range strings.Split(s.Text, "\n") {
				if strings.HasPrefix(line, "#") {
					continue
				}
				f := strings.Fields(line)
				sched := strings.Join(f[:min(5, len(f))], " ")
				if strings.HasPrefix(line, "@") {
					sched = f[0]
				}
				isCrontab := schedule.Crontab(sched)
				if strings.Contains(s.Title, "crontab") || s.Title == "cron line" {
					if !isCrontab {
						t.Errorf("%+v: %s (%s) is not a line Debian's cron runs: %q", d, s.ID, s.Title, s.Text)
					}
				} else if !strings.HasPrefix(s.Text, "# Beet's schedule "+d.Cron+" is not crontab syntax") || !strings.HasPrefix(line, "/path/to/job && curl") {
					t.Errorf("%+v: %s (%s) neither a crontab line nor a shell line marked as such: %q", d, s.ID, s.Title, s.Text)
				}
			}
		}
	}
}
