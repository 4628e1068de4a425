package detectjudge

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Goals of issue 28 on the yardsticks and while learning.
const (
	GoalSilenceShare       = 0.95 // of the silences the oracle finds, found
	GoalSilenceRatio       = 1.3  // median time to detect over the oracle's
	GoalSilenceFamilyRatio = 2.0  // the same, in every family
	GoalCUSUMShare         = 0.90 // of the drops and surges the CUSUM finds, found
	GoalCUSUMRatio         = 1.5  // median time to detect over the CUSUM's
	GoalLearningAlarms     = 1.0  // false alarms per 1000 learning beet-days
)

// untuned returns a test of family names: in the untuned families (true)
// or in the tuned ones (false).
func (r Report) untuned(want bool) func(string) bool {
	u := map[string]bool{}
	for _, f := range r.Config.Families {
		u[f.Name] = f.Untuned
	}
	return func(name string) bool { return u[name] == want }
}

// writeYardsticks reports time to detect against the yardsticks: silences
// (outages, missed runs) against the oracle, drops and surges against the
// CUSUM; per family, then tuned and untuned families each as a whole.
func (r Report) writeYardsticks(w io.Writer) {
	fmt.Fprintf(w, "\n### Time to detect against the yardsticks\n\n"+
		"Each yardstick knows the stream's generating process and runs at the false-alarm budget the detector is held to "+
		"(%g false alarms per 1000 beet-days: on a stream of N arrivals a day, a per-arrival tail probability of %g/N; "+
		"see docs/EVALUATION.md). **Silences** (outages and missed runs, first-week ones included) are measured against "+
		"the silence oracle: it flags a silence as soon as no arrival since the last one has become rarer than that "+
		"(a scheduled job: the moment a normal run would certainly have reported), given at least %d arrivals before. "+
		"**Drops and surges** against a CUSUM that knows the rates before and after the change. Found: in [start, end + %s]. "+
		"The ratio is the detector's time to detect over the yardstick's, on the incidents both found "+
		"(times from the incident's start; the yardstick's taken as at least %s, the judge's resolution for missed runs).\n\n",
		1000*YardstickBudget, YardstickBudget, minRunsBefore, fmtTTD(DetectTolerance), fmtTTD(GraceSlack))
	for _, y := range []struct{ yard, title string }{{YardOracle, "Silences against the oracle"}, {YardCUSUM, "Drops and surges against the CUSUM"}} {
		fmt.Fprintf(w, "**%s**\n\n| family | incidents | found by the yardstick | of those, found | share | median TTD | yardstick's median TTD | median ratio | p90 ratio |\n"+
			"|---|---:|---:|---:|---:|---:|---:|---:|---:|\n", y.title)
		for _, untuned := range []bool{false, true} {
			keep := r.untuned(untuned)
			rows := 0
			for _, f := range r.Config.Families {
				if !keep(f.Name) {
					continue
				}
				s := SummariseYard(r.Synth.Incidents, y.yard, func(o IncidentOutcome) bool { return o.Family == f.Name })
				if s.N == 0 {
					continue
				}
				rows++
				fmt.Fprintf(w, "| %s |%s\n", f.Name, yardCells(s))
			}
			if rows == 0 {
				continue
			}
			label := "**tuned families**"
			if untuned {
				label = "**untuned families**"
			}
			s := SummariseYard(r.Synth.Incidents, y.yard, func(o IncidentOutcome) bool { return keep(o.Family) })
			fmt.Fprintf(w, "| %s |%s\n", label, yardCells(s))
		}
		fmt.Fprintln(w)
	}
}

func yardCells(s YardSummary) string {
	if s.BothFound == 0 {
		return fmt.Sprintf(" %d | %d | %d | %s | – | – | – | – |", s.N, s.YardFound, s.BothFound, sharePct(s.BothFound, s.YardFound))
	}
	return fmt.Sprintf(" %d | %d | %d | %s | %s | %s | %.2f | %.2f |", s.N, s.YardFound, s.BothFound, sharePct(s.BothFound, s.YardFound),
		fmtTTD(s.Median), fmtTTD(s.YardMedian), s.MedianRatio, s.P90Ratio)
}

func sharePct(a, b int) string {
	if b == 0 {
		return "–"
	}
	return pct(ratio(a, b))
}

// writeLearning reports what happens before a detector arms: false alarms
// raised while learning, and the incidents that started then.
func (r Report) writeLearning(w io.Writer) {
	fmt.Fprintf(w, "### While learning\n\n"+
		"From each stream's first event until the detector armed (the whole stream if it never did), outside incident and "+
		"excused windows: the false alarms raised there (they count in the overall false alarms too), per 1000 learning "+
		"beet-days; and the incidents that started before the detector armed (the first-week ones, mostly), found of "+
		"those the yardstick found.\n\n"+
		"| family | learning beet-days | false alarms while learning | per 1000 learning beet-days | incidents while learning | found by the yardstick | of those, found |\n"+
		"|---|---:|---:|---:|---:|---:|---:|\n")
	for _, untuned := range []bool{false, true} {
		keep := r.untuned(untuned)
		for _, f := range r.Config.Families {
			if keep(f.Name) {
				r.learningRow(w, f.Name, func(name string) bool { return name == f.Name })
			}
		}
		label := "**tuned families**"
		if untuned {
			label = "**untuned families**"
		}
		r.learningRow(w, label, keep)
	}
	fmt.Fprintln(w)
}

func (r Report) learningRow(w io.Writer, label string, keep func(string) bool) {
	st := SummariseStreams(r.Synth.Streams, func(o StreamOutcome) bool { return keep(o.Family) })
	if st.Streams == 0 {
		return
	}
	n, yard, found := 0, 0, 0
	for _, o := range r.Synth.Incidents {
		if !keep(o.Family) || !o.Learning {
			continue
		}
		n++
		if o.YardFound {
			yard++
			if o.Detected {
				found++
			}
		}
	}
	fmt.Fprintf(w, "| %s | %.0f | %d | %.2f | %d | %d | %d |\n", label, st.LearningDays, st.LearningFalse, st.LearningPer1000(), n, yard, found)
}

// writeYardGoals checks the goals of issue 28 on the tuned families, then
// states the same figures for the untuned ones.
func (r Report) writeYardGoals(w io.Writer) {
	mark := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**not met**"
	}
	for _, untuned := range []bool{false, true} {
		keep := r.untuned(untuned)
		prefix := ""
		if untuned {
			prefix = "Untuned families, "
		}
		sil := SummariseYard(r.Synth.Incidents, YardOracle, func(o IncidentOutcome) bool { return keep(o.Family) })
		cus := SummariseYard(r.Synth.Incidents, YardCUSUM, func(o IncidentOutcome) bool { return keep(o.Family) })
		st := SummariseStreams(r.Synth.Streams, func(o StreamOutcome) bool { return keep(o.Family) })
		if st.Streams == 0 {
			continue
		}
		var slow []string
		for _, f := range r.Config.Families {
			if !keep(f.Name) {
				continue
			}
			s := SummariseYard(r.Synth.Incidents, YardOracle, func(o IncidentOutcome) bool { return o.Family == f.Name })
			if s.BothFound > 0 && s.MedianRatio > GoalSilenceFamilyRatio {
				slow = append(slow, fmt.Sprintf("%s %.2f", f.Name, s.MedianRatio))
			}
		}
		fmt.Fprintf(w, "- %sat least %.0f%% of the silences the oracle finds found: %s (%d of %d, %s).\n", prefix,
			100*GoalSilenceShare, mark(sil.Share() >= GoalSilenceShare), sil.BothFound, sil.YardFound, sharePct(sil.BothFound, sil.YardFound))
		fmt.Fprintf(w, "- %smedian time to detect a silence at most %.1f× the oracle's: %s (%.2f).\n", prefix,
			GoalSilenceRatio, mark(sil.BothFound > 0 && sil.MedianRatio <= GoalSilenceRatio), sil.MedianRatio)
		fmt.Fprintf(w, "- %sno family's median above %.0f×: %s", prefix, GoalSilenceFamilyRatio, mark(len(slow) == 0))
		if len(slow) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(slow, ", "))
		}
		fmt.Fprintf(w, ".\n- %sat least %.0f%% of the drops and surges the CUSUM finds found: %s (%d of %d, %s).\n", prefix,
			100*GoalCUSUMShare, mark(cus.Share() >= GoalCUSUMShare), cus.BothFound, cus.YardFound, sharePct(cus.BothFound, cus.YardFound))
		fmt.Fprintf(w, "- %smedian time to detect them at most %.1f× the CUSUM's: %s (%.2f).\n", prefix,
			GoalCUSUMRatio, mark(cus.BothFound > 0 && cus.MedianRatio <= GoalCUSUMRatio), cus.MedianRatio)
		fmt.Fprintf(w, "- %sat most %.0f false alarm per 1000 learning beet-days: %s (%.2f: %d in %.0f).\n", prefix,
			GoalLearningAlarms, mark(st.LearningPer1000() <= GoalLearningAlarms), st.LearningPer1000(), st.LearningFalse, st.LearningDays)
	}
	r.writeTooOftenGoals(w, mark)
}

// writeTooOftenGoals: a job that runs more often than its schedule is
// flagged; a single run by hand raises nothing.
func (r Report) writeTooOftenGoals(w io.Writer, mark func(bool) string) {
	n, found := 0, 0
	kinds := map[string]int{}
	for _, f := range r.Config.Families {
		for _, sp := range f.Incidents {
			if sp.Kind != IncidentTooOften {
				continue
			}
			for _, o := range r.Synth.Incidents {
				if o.Family == f.Name && o.Incident == sp.Name {
					n++
					if o.Detected {
						found++
						kinds[o.Kind]++
					}
				}
			}
		}
	}
	if n > 0 {
		var ks []string
		for k, c := range kinds {
			ks = append(ks, fmt.Sprintf("%s %d", k, c))
		}
		sort.Strings(ks)
		fmt.Fprintf(w, "- A job running more often than its schedule flagged: %s (%d of %d; alarms: %s).\n", mark(found == n), found, n, strings.Join(ks, ", "))
	}
	eps, flagged := 0, 0
	for _, f := range r.Config.Families {
		for _, sp := range f.Episodes {
			if sp.Kind != IncidentExtra || sp.Runs != 1 || sp.Extra != 1 {
				continue
			}
			for _, o := range r.Synth.Episodes {
				if o.Family == f.Name && o.Episode == sp.Name {
					eps++
					if o.Alarms > 0 {
						flagged++
					}
				}
			}
		}
	}
	if eps > 0 {
		fmt.Fprintf(w, "- A single run by hand raises nothing: %s (%d of %d raised an alarm).\n", mark(flagged == 0), flagged, eps)
	}
}
