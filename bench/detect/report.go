package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/beethq/beet/bench/detect/harness"
)

// report renders one run as Markdown.
type report struct {
	opt      options
	about    string
	families []*harness.Family
	synth    *harness.Results
	nab      []harness.NABFileResult
	profiles []harness.Profile
}

func (r report) write(w io.Writer) {
	o := r.opt
	fmt.Fprintf(w, "# Detection benchmark: `%s`\n\n", o.detector)
	fmt.Fprintf(w, "Command: `%s`\n\n", o.commandLine)
	fmt.Fprintf(w, "%s\n\n", r.about)
	if r.synth != nil {
		r.writeSynthetic(w)
	}
	if r.nab != nil {
		r.writeNAB(w)
	}
}

func (r report) writeSynthetic(w io.Writer) {
	o := r.opt
	fmt.Fprintf(w, "## Synthetic beets\n\n")
	fmt.Fprintf(w, "Seed %d. Per family and incident kind, %d streams: %d days of clean traffic to learn from, then one incident "+
		"starting at a uniformly random time in the following week, which holds a DST change of the beet's zone "+
		"(beets are spread over America/New_York, Europe/Berlin, Europe/Riga and Australia/Sydney; cron jobs in Europe/Riga). "+
		"An incident is detected by the first raised alarm of any kind between its start and its end + %s; "+
		"time to detect (TTD) runs from the incident start (for missed runs: the first missed run's scheduled time) "+
		"and its median and p95 (nearest rank) are over detected incidents. "+
		"False alarms: %d clean beets per family, every alarm raised after the %d learning days, over %d scored days each "+
		"(a DST change on day 10). Recoveries are not alarms.\n\n",
		o.seed, o.streams, harness.LearnDays, fmtTTD(harness.DetectTolerance), o.cleanBeets, harness.LearnDays, o.cleanDays)

	fmt.Fprintf(w, "### Per family\n\n")
	fmt.Fprintf(w, "| family | incidents | detected | median TTD | p95 TTD | false alarms / 1000 beet-days | beets with a false alarm |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|\n")
	for _, f := range r.families {
		s := harness.SummariseIncidents(r.synth.Incidents, func(o harness.IncidentOutcome) bool { return o.Family == f.Name })
		fa := harness.SummariseClean(r.synth.Clean, f.Name)
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %.1f | %d/%d |\n", f.Name, s.N, pct(s.Share()),
			ttd(s, s.Median), ttd(s, s.P95), fa.Per1000(), fa.Noisy, fa.Beets)
	}

	fmt.Fprintf(w, "\n### Per incident\n\n")
	fmt.Fprintf(w, "| family | incident | n | detected | median TTD | p95 TTD |\n|---|---|---:|---:|---:|---:|\n")
	for _, f := range r.families {
		for _, spec := range f.Incidents {
			s := harness.SummariseIncidents(r.synth.Incidents, func(o harness.IncidentOutcome) bool {
				return o.Family == f.Name && o.Incident == spec.Name
			})
			fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s |\n", f.Name, spec.Name, s.N, pct(s.Share()), ttd(s, s.Median), ttd(s, s.P95))
		}
	}

	r.writeEpisodes(w)

	fmt.Fprintf(w, "\n### Families\n\n| family | traffic |")
	if r.hasDescriptions() {
		fmt.Fprintf(w, " detector set-up on the first clean beets |\n|---|---|---|\n")
	} else {
		fmt.Fprintf(w, "\n|---|---|\n")
	}
	for _, f := range r.families {
		fmt.Fprintf(w, "| %s | %s |", f.Name, f.Description)
		if r.hasDescriptions() {
			fmt.Fprintf(w, " %s |", strings.Join(r.descriptions(f.Name, 3), "; "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

// writeEpisodes reports the episodes (a schedule getting extra events):
// not incidents, but a detector must not flap on them.
func (r report) writeEpisodes(w io.Writer) {
	if len(r.synth.Episodes) == 0 {
		return
	}
	fmt.Fprintf(w, "\n### Schedules getting extra events\n\n"+
		"Not incidents: every run still comes, with more events than usual. A detector may flag the episode once "+
		"(a surge) or take the extras as runs; it must not flap, nor say the beet is down. Alarms are counted from the "+
		"first affected run to %s after the episode's end (the next run without extras, or the end of a retry loop).\n\n", fmtTTD(harness.DetectTolerance))
	fmt.Fprintf(w, "| family | episode | n | with an alarm | most alarms in one | silence or missed-run alarms |\n|---|---|---:|---:|---:|---:|\n")
	for _, f := range r.families {
		for _, spec := range f.Episodes {
			n, flagged, most, down := 0, 0, 0, 0
			for _, o := range r.synth.Episodes {
				if o.Family != f.Name || o.Episode != spec.Name {
					continue
				}
				n++
				if o.Alarms > 0 {
					flagged++
				}
				most = max(most, o.Alarms)
				down += o.Down
			}
			fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %d |\n", f.Name, spec.Name, n, flagged, most, down)
		}
	}
}

func (r report) hasDescriptions() bool {
	for _, c := range r.synth.Clean {
		if c.Describe != "" {
			return true
		}
	}
	return false
}

// descriptions returns the detector set-ups of the first n clean beets of a family.
func (r report) descriptions(family string, n int) []string {
	var out []string
	for _, c := range r.synth.Clean {
		if c.Family == family && c.Describe != "" && len(out) < n {
			out = append(out, c.Describe)
		}
	}
	return out
}

func (r report) writeNAB(w io.Writer) {
	fmt.Fprintf(w, "## NAB\n\n")
	fmt.Fprintf(w, "The six NAB v1.1 count series in `shared/data/nab`, replayed bucket by bucket (`Advance(bucket)`, then "+
		"`Event(bucket, count)` when the count is not 0; missing buckets are skipped, not zeros; timestamps read as UTC). "+
		"A raised alarm flags the row whose bucket holds its time; NAB scores rows, so several alarms on one row are one detection. "+
		"Scored as NAB v1.1 does (sweeper.py): the first 15%% of rows (at most 750) are probation and not scored; "+
		"only the earliest detection in a window counts, weighted by NAB's scaled sigmoid of its position; a window "+
		"without detection costs fnWeight; a detection outside windows costs fpWeight × the sigmoid of its distance past "+
		"the preceding window (full fpWeight before the first window). Normalised = 100 × (raw − null) / (perfect − null), "+
		"null = never firing, perfect = one detection at the start of every window; the corpus score normalises the summed raw scores.\n\n")
	fmt.Fprintf(w, "| series | rows | windows | detected | false-positive rows | raised alarms |")
	for _, p := range r.profiles {
		fmt.Fprintf(w, " %s |", p.Name)
	}
	fmt.Fprintf(w, "\n|---|---:|---:|---:|---:|---:|%s\n", strings.Repeat("---:|", len(r.profiles)))
	total := map[string]harness.NABScore{}
	rows, alarms := 0, 0
	for _, f := range r.nab {
		std := f.Scores[r.profiles[0].Name]
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d |", f.Name, f.Rows, std.Windows, std.Hits, std.FPs, f.Alarms)
		for _, p := range r.profiles {
			fmt.Fprintf(w, " %.1f |", f.Scores[p.Name].Normalised())
			total[p.Name] = total[p.Name].Add(f.Scores[p.Name])
		}
		fmt.Fprintln(w)
		rows += f.Rows
		alarms += f.Alarms
	}
	std := total[r.profiles[0].Name]
	fmt.Fprintf(w, "| **corpus** | %d | %d | %d | %d | %d |", rows, std.Windows, std.Hits, std.FPs, alarms)
	for _, p := range r.profiles {
		fmt.Fprintf(w, " **%.1f** |", total[p.Name].Normalised())
	}
	fmt.Fprintf(w, "\n\nProfiles (tp/fn/fp weights):")
	for _, p := range r.profiles {
		fmt.Fprintf(w, " %s %g/%g/%g;", p.Name, p.TP, p.FN, p.FP)
	}
	fmt.Fprintf(w, " raw standard score %.3f (null %.0f, perfect %.0f).\n\n", std.Raw, std.Null, std.Perfect)
	var setups []string
	for _, f := range r.nab {
		if f.Describe != "" {
			setups = append(setups, fmt.Sprintf("%s: %s", f.Name, f.Describe))
		}
	}
	if len(setups) > 0 {
		fmt.Fprintf(w, "Detector set-up per series: %s.\n\n", strings.Join(setups, "; "))
	}
}

// ttd formats a TTD statistic, or a dash when nothing was detected.
func ttd(s harness.DetectionSummary, d time.Duration) string {
	if s.Detected == 0 {
		return "–"
	}
	return fmtTTD(d)
}

// fmtTTD formats a duration with two units at most: 45s, 3m10s, 2h05m, 1d02h.
func fmtTTD(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd%02dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}

func pct(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }
