package detectjudge

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// A Report is one run of the judge, rendered as Markdown by Write.
type Report struct {
	Command  string // the command line that reproduces it
	Detector string
	About    string // one paragraph on the detector
	Split    string // SplitTune, SplitHoldout, or "" for a custom seed
	Config   Config
	Synth    *Results // nil: not run
	NAB      []NABFileResult
	Profiles []Profile
	LOFO     *LOFOResult
	Elapsed  time.Duration
}

// Write renders r.
func (r Report) Write(w io.Writer) {
	fmt.Fprintf(w, "# Detection judged: `%s`\n\n", r.Detector)
	fmt.Fprintf(w, "Command: `%s`\n\n", r.Command)
	switch r.Split {
	case SplitTune:
		fmt.Fprintf(w, "Split: **TUNING** seeds (seed %d). Choose parameters on these.\n\n", r.Config.Seed)
	case SplitHoldout:
		fmt.Fprintf(w, "Split: **HELD-OUT** seeds (seed %d). Report these; never tune on them.\n\n", r.Config.Seed)
	default:
		fmt.Fprintf(w, "Split: custom seed %d (neither the tuning nor the held-out split).\n\n", r.Config.Seed)
	}
	if r.About != "" {
		fmt.Fprintf(w, "%s\n\n", r.About)
	}
	if r.Synth != nil {
		r.writeSynthetic(w)
	}
	if r.NAB != nil {
		r.writeNAB(w)
	}
	if r.LOFO != nil {
		r.writeLOFO(w)
	}
	r.writeGoals(w)
}

// writeGoals checks the run against the goals of issue 12 ("Done when").
func (r Report) writeGoals(w io.Writer) {
	fmt.Fprintf(w, "## Goals (issues 12 and 28; synthetic ones on the tuned families)\n\n")
	mark := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**not met**"
	}
	if r.Synth != nil {
		tuned := r.untuned(false)
		all := SummariseStreams(r.Synth.Streams, func(o StreamOutcome) bool { return tuned(o.Family) })
		inc := SummariseIncidents(r.Synth.Incidents, func(o IncidentOutcome) bool { return tuned(o.Family) })
		var noisy []string
		for _, f := range Tuned(r.Config.Families) {
			if s := SummariseStreams(r.Synth.Streams, func(o StreamOutcome) bool { return o.Family == f.Name }); s.Per1000() > 1 {
				noisy = append(noisy, fmt.Sprintf("%s %.1f", f.Name, s.Per1000()))
			}
		}
		fmt.Fprintf(w, "- At most 0.5 false alarms per 1000 beet-days overall: %s (%.2f).\n", mark(all.Per1000() <= 0.5), all.Per1000())
		fmt.Fprintf(w, "- At most 1 in every family: %s", mark(len(noisy) == 0))
		if len(noisy) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(noisy, ", "))
		}
		fmt.Fprintf(w, ".\n- No stream unarmed after the bound (%g days after the first event, given %d events): %s (%d streams).\n",
			r.Config.ArmDays, r.Config.ArmEvents, mark(all.Late == 0), all.Late)
		fmt.Fprintf(w, "- At least 90%% of the incidents detectable in principle found: %s (%s).\n", mark(inc.ShareDetectable() >= 0.9), pct(inc.ShareDetectable()))
		missed, inGrace, strict := 0, 0, 0
		late := map[string]int{}
		for _, o := range r.Synth.Incidents {
			if o.MissedRun && o.Detectable && tuned(o.Family) {
				missed++
				if o.InGraceStrict {
					strict++
				}
				if o.InGrace {
					inGrace++
				} else {
					late[o.Family]++
				}
			}
		}
		fmt.Fprintf(w, "- Scheduled jobs' missed runs (detectable) flagged as missed runs within the stated grace plus %s "+
			"of the time stated for the run, that time within the run's normal reporting window: %s (%d of %d; "+
			"counting from the earliest a normal run reports instead: %d)",
			fmtTTD(GraceSlack), mark(inGrace == missed), inGrace, missed, strict)
		if len(late) > 0 {
			var fs []string
			for _, f := range r.Config.Families {
				if n := late[f.Name]; n > 0 {
					fs = append(fs, fmt.Sprintf("%s %d", f.Name, n))
				}
			}
			fmt.Fprintf(w, "; not: %s", strings.Join(fs, ", "))
		}
		fmt.Fprintf(w, ".\n")
		r.writeYardGoals(w)
	}
	if r.NAB != nil && len(r.Profiles) > 0 {
		var std NABScore
		for _, f := range r.NAB {
			std = std.Add(f.Scores[r.Profiles[0].Name])
		}
		fmt.Fprintf(w, "- NAB dev set at least 72: %s (%.1f).\n", mark(std.Normalised() >= 72), std.Normalised())
		if r.LOFO != nil {
			d := r.LOFO.Dev.Normalised() - r.LOFO.LOFO.Normalised()
			fmt.Fprintf(w, "- Leave-one-file-out within 3 points of it: %s (%.1f)", mark(d <= 3), r.LOFO.LOFO.Normalised())
			if r.LOFO.Tunings == 1 {
				fmt.Fprintf(w, ", trivially: one parameter set")
			}
			fmt.Fprintf(w, ".\n")
		}
	}
	fmt.Fprintln(w)
}

func (r Report) writeSynthetic(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "## Synthetic beets\n\n")
	fmt.Fprintf(w, "Per family: %d streams with no incident, and %d streams per incident kind with one incident each; "+
		"every stream is %d days long (monthly jobs: 160) and crosses a DST change of its traffic's zone. "+
		"False alarms count from each stream's first event, learning included, outside incident windows "+
		"([start, end + %s]) and excused windows. An incident is found by the first raised alarm in its window; "+
		"time to detect (TTD) runs from its start (schedules: the first affected run's slot). "+
		"*Detectable* incidents are those an oracle that knows the generating process tells from normal traffic "+
		"at p ≤ %g (see docs/EVALUATION.md). Armed: the detector's first flip out of learning once its model is armed; "+
		"the bound is the first event at least %g days after the first event, given %d events by then.\n\n",
		c.CleanStreams, c.IncidentStreams, DefaultDays, fmtTTD(DetectTolerance), OracleAlpha, c.ArmDays, c.ArmEvents)

	for _, untuned := range []bool{false, true} {
		keep := r.untuned(untuned)
		all := SummariseStreams(r.Synth.Streams, func(o StreamOutcome) bool { return keep(o.Family) })
		allInc := SummariseIncidents(r.Synth.Incidents, func(o IncidentOutcome) bool { return keep(o.Family) })
		if all.Streams == 0 {
			continue
		}
		label := "Overall"
		if untuned {
			label = "Untuned families (reported apart, not in the overall figures)"
		}
		fmt.Fprintf(w, "**%s: %.2f false alarms per 1000 beet-days** (%d in %.0f beet-days); **%s of detectable incidents found** "+
			"(%d of %d; %s of all %d), raising %d alarms from calm (%.2f each: more than one is flapping); %d of %d streams not armed within the bound (%d never armed).\n\n",
			label, all.Per1000(), all.FalseAlarms, all.Days, pct(allInc.ShareDetectable()), allInc.DetectableFound, allInc.Detectable,
			pct(allInc.Share()), allInc.N, allInc.Alarms, ratio(allInc.Alarms, allInc.Detected), all.Late, all.Streams, all.Never)
	}

	fmt.Fprintf(w, "| family | false alarms / 1000 beet-days | streams with one | found (of detectable) | found (of all) | alarms per found | median TTD | p95 TTD | days to arm: median | max | not armed in bound |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, f := range r.Config.Families {
		st := SummariseStreams(r.Synth.Streams, func(o StreamOutcome) bool { return o.Family == f.Name })
		s := SummariseIncidents(r.Synth.Incidents, func(o IncidentOutcome) bool { return o.Family == f.Name })
		fmt.Fprintf(w, "| %s | %.2f | %d/%d | %s (%d/%d) | %s (%d/%d) | %.2f | %s | %s | %s | %s | %s |\n", f.Name,
			st.Per1000(), st.Noisy, st.Streams,
			pct(s.ShareDetectable()), s.DetectableFound, s.Detectable, pct(s.Share()), s.Detected, s.N, ratio(s.Alarms, s.Detected),
			ttd(s, s.Median), ttd(s, s.P95), armDays(st, st.ArmMedian), armDays(st, st.ArmMax), armLate(st))
	}

	r.writeFalseAlarms(w)
	r.writeYardsticks(w)
	r.writeLearning(w)

	fmt.Fprintf(w, "\n### Per incident\n\n")
	fmt.Fprintf(w, "| family | incident | n | detectable | found of detectable | found of all | median TTD | p95 TTD |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, f := range r.Config.Families {
		for _, spec := range f.Incidents {
			s := SummariseIncidents(r.Synth.Incidents, func(o IncidentOutcome) bool {
				return o.Family == f.Name && o.Incident == spec.Name
			})
			fmt.Fprintf(w, "| %s | %s | %d | %d | %s | %s | %s | %s |\n", f.Name, spec.Name, s.N, s.Detectable,
				pct(s.ShareDetectable()), pct(s.Share()), ttd(s, s.Median), ttd(s, s.P95))
		}
	}
	r.writeEpisodes(w)

	fmt.Fprintf(w, "\n### Families\n\n| family | traffic | beet zone |\n|---|---|---|\n")
	for _, f := range r.Config.Families {
		z := "the traffic's (" + strings.Join(f.Zones, ", ") + ")"
		if f.BeetZone != "" {
			z = f.BeetZone + " (traffic: " + strings.Join(f.Zones, ", ") + ")"
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", f.Name, f.Description, z)
	}
	fmt.Fprintf(w, "\n%d streams, %d events replayed in %s.\n\n", len(r.Synth.Streams), r.Synth.Events, r.Elapsed.Round(time.Second))
}

// writeFalseAlarms says which kinds of alarm were false, per family, and
// names the noisiest streams so they can be replayed (-dump NAME).
func (r Report) writeFalseAlarms(w io.Writer) {
	var lines []string
	for _, f := range r.Config.Families {
		st := SummariseStreams(r.Synth.Streams, func(o StreamOutcome) bool { return o.Family == f.Name })
		if st.FalseAlarms == 0 {
			continue
		}
		kinds := make([]string, 0, len(st.FalseKinds))
		for k, n := range st.FalseKinds {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
		sort.Strings(kinds)
		var worst StreamOutcome
		for _, o := range r.Synth.Streams {
			if o.Family == f.Name && len(o.False) > len(worst.False) {
				worst = o
			}
		}
		lines = append(lines, fmt.Sprintf("| %s | %s | %s (%d, the first at %s) |", f.Name, strings.Join(kinds, ", "),
			worst.Name, len(worst.False), worst.False[0].At.UTC().Format(time.RFC3339)))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\n### False alarms by kind\n\n| family | kinds | noisiest stream (-dump it) |\n|---|---|---|\n%s\n", strings.Join(lines, "\n"))
}

// writeEpisodes reports the excused windows: not incidents, but a detector
// must not flap on them.
func (r Report) writeEpisodes(w io.Writer) {
	if len(r.Synth.Episodes) == 0 {
		return
	}
	fmt.Fprintf(w, "\n### Excused windows\n\n"+
		"Not incidents, not false alarms: a schedule getting extra events (every run still comes, with more events; "+
		"alarms counted from the first affected run to %s after the episode), or the two periods after a schedule change. "+
		"A detector may flag one once; it must not flap, nor say the beet is down while every run comes.\n\n", fmtTTD(DetectTolerance))
	fmt.Fprintf(w, "| family | window | n | with an alarm | most alarms in one | silence or missed-run alarms |\n|---|---|---:|---:|---:|---:|\n")
	type key struct{ fam, ep string }
	type agg struct{ n, flagged, most, down int }
	var order []key
	seen := map[key]*agg{}
	for _, o := range r.Synth.Episodes {
		k := key{o.Family, o.Episode}
		a := seen[k]
		if a == nil {
			a = &agg{}
			seen[k] = a
			order = append(order, k)
		}
		a.n++
		if o.Alarms > 0 {
			a.flagged++
		}
		a.most = max(a.most, o.Alarms)
		a.down += o.Down
	}
	for _, k := range order {
		a := seen[k]
		fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %d |\n", k.fam, k.ep, a.n, a.flagged, a.most, a.down)
	}
}

func (r Report) writeNAB(w io.Writer) {
	fmt.Fprintf(w, "## NAB\n\n")
	fmt.Fprintf(w, "The six NAB v1.1 count series, replayed bucket by bucket (`Advance(bucket)`, then "+
		"`Event(bucket, count)` when the count is not 0; missing buckets are skipped, not zeros; timestamps read as UTC). "+
		"A raised alarm flags the row whose bucket holds its time; several alarms on one row are one detection. "+
		"Scored as NAB v1.1 does (sweeper.py): the first 15%% of rows (at most 750) are probation and not scored; "+
		"only the earliest detection in a window counts, weighted by NAB's scaled sigmoid of its position; a window "+
		"without detection costs fnWeight; a detection outside windows costs fpWeight × the sigmoid of its distance past "+
		"the preceding window (full fpWeight before the first window). Normalised = 100 × (raw − null) / (perfect − null); "+
		"the corpus score normalises the summed raw scores. This is the **dev set**: it has been looked at and tuned on.\n\n")
	fmt.Fprintf(w, "| series | rows | windows | detected | false-positive rows | raised alarms |")
	for _, p := range r.Profiles {
		fmt.Fprintf(w, " %s |", p.Name)
	}
	fmt.Fprintf(w, "\n|---|---:|---:|---:|---:|---:|%s\n", strings.Repeat("---:|", len(r.Profiles)))
	total := map[string]NABScore{}
	rows, alarms := 0, 0
	for _, f := range r.NAB {
		std := f.Scores[r.Profiles[0].Name]
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d |", f.Name, f.Rows, std.Windows, std.Hits, std.FPs, f.Alarms)
		for _, p := range r.Profiles {
			fmt.Fprintf(w, " %.1f |", f.Scores[p.Name].Normalised())
			total[p.Name] = total[p.Name].Add(f.Scores[p.Name])
		}
		fmt.Fprintln(w)
		rows += f.Rows
		alarms += f.Alarms
	}
	std := total[r.Profiles[0].Name]
	fmt.Fprintf(w, "| **corpus** | %d | %d | %d | %d | %d |", rows, std.Windows, std.Hits, std.FPs, alarms)
	for _, p := range r.Profiles {
		fmt.Fprintf(w, " **%.1f** |", total[p.Name].Normalised())
	}
	fmt.Fprintf(w, "\n\nProfiles (tp/fn/fp weights):")
	for _, p := range r.Profiles {
		fmt.Fprintf(w, " %s %g/%g/%g;", p.Name, p.TP, p.FN, p.FP)
	}
	fmt.Fprintf(w, " raw standard score %.3f (null %.0f, perfect %.0f).\n\n", std.Raw, std.Null, std.Perfect)
	var setups []string
	for _, f := range r.NAB {
		if f.Describe != "" {
			setups = append(setups, fmt.Sprintf("%s: %s", f.Name, f.Describe))
		}
	}
	if len(setups) > 0 {
		fmt.Fprintf(w, "Detector set-up per series: %s.\n\n", strings.Join(setups, "; "))
	}
}

func (r Report) writeLOFO(w io.Writer) {
	l := r.LOFO
	fmt.Fprintf(w, "### NAB leave-one-file-out (%s profile)\n\n", l.Profile.Name)
	fmt.Fprintf(w, "For each file, a parameter set (out of %d) is chosen on the other five alone and scores the sixth; the six held-out "+
		"scores are summed as NAB sums a corpus. The choice is the set with the best corpus score on the five among those that "+
		"gain at least %.1f points there over the defaults, lower none of the five by more than %.1f points", l.Tunings, l.Rules.MinGain, l.Rules.MaxFileDrop)
	if l.Rules.Synthetic != nil {
		fmt.Fprintf(w, ", and keep the synthetic tuning seeds within the false-alarm goals (%.1f per 1000 beet-days overall, %d in "+
			"every family, or no worse than the defaults where they miss it)", GoalFalseAlarms, GoalFamilyFalseAlarms)
	} else {
		fmt.Fprintf(w, " (**not screened** on the synthetic seeds: -screen=false)")
	}
	fmt.Fprintf(w, "; else the defaults. If leave-one-out falls well below the dev score, what was chosen on five files does not carry over.\n\n")
	fmt.Fprintf(w, "| held-out file | chosen on the other five | held-out score | with the defaults | better on the five, not chosen |\n|---|---|---:|---:|---|\n")
	for _, f := range l.Files {
		rej := "–"
		if len(f.Rejected) > 0 {
			rej = strings.Join(f.Rejected, "; ")
		}
		fmt.Fprintf(w, "| %s | %s | %.1f | %.1f | %s |\n", f.Name, f.Chosen, f.Score.Normalised(), f.Default.Normalised(), rej)
	}
	if len(l.Screened) > 0 {
		fmt.Fprintf(w, "\nScreened on the synthetic tuning seeds: %s.\n", strings.Join(l.Screened, "; "))
	}
	fmt.Fprintf(w, "\n**Dev score (defaults): %.1f. In-sample best, no rules (%s): %.1f. Leave-one-file-out: %.1f.**", l.Dev.Normalised(),
		l.BestName, l.InSample.Normalised(), l.LOFO.Normalised())
	if l.Tunings == 1 {
		fmt.Fprintf(w, " The detector exposes one parameter set only, so leave-one-out equals the dev score by construction.")
	}
	fmt.Fprintf(w, "\n\n")
}

func ttd(s DetectionSummary, d time.Duration) string {
	if s.Detected == 0 {
		return "–"
	}
	return fmtTTD(d)
}

func armDays(s StreamSummary, d time.Duration) string {
	if s.Streams == s.Never {
		return "never"
	}
	return fmt.Sprintf("%.1f", d.Hours()/24)
}

func armLate(s StreamSummary) string {
	if s.Never > 0 {
		return fmt.Sprintf("%d (%d never)", s.Late, s.Never)
	}
	return fmt.Sprintf("%d", s.Late)
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
