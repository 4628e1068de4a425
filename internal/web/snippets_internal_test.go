package web

import (
	"strings"
	"testing"

	"github.com/beethq/beet"
)

// The crontab line a beet's page offers keeps that beet up when copied:
// a cron beet's own schedule (in its zone), a period beet's least frequent
// common schedule within the period, an example in auto mode. And the
// curl lines print nothing, so `curl … && next` goes on in a terminal.
func TestCronLineFitsTheBeet(t *testing.T) {
	for _, c := range []struct {
		d    beet.Detection
		line string
	}{
		{beet.Detection{Mode: beet.ModeCron, Cron: "*/5 * * * *", Timezone: "UTC"}, "*/5 * * * *"},
		{beet.Detection{Mode: beet.ModeCron, Cron: "30 6 * * 1-5", Timezone: "Europe/Riga"}, "CRON_TZ=Europe/Riga\n30 6 * * 1-5"},
		{beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 120}, "*/2 * * * *"},
		{beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600}, "0 * * * *"},
		{beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 5400}, "0 * * * *"},
		{beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 6 * 3600}, "0 */6 * * *"},
		{beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 25 * 3600}, "0 2 * * *"},
		{beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 30}, "* * * * *"},
		{beet.Detection{Mode: beet.ModeAuto}, "0 2 * * *"},
	} {
		if got, _ := cronLine(c.d); got != c.line {
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
