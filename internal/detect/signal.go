package detect

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/beethq/beet"
)

// Job signals. A job that reports its runs ({token}/start, /fail, /{exit
// code}) is judged by what it reports as well as by when it reports:
//
//   - a failure (/fail or a non-zero exit code) turns the beet down at
//     once, in every mode; the next success brings it up (or back to
//     learning, in auto mode before the rhythm is learned);
//   - a start opens a run. While a run is open and a run-time limit is
//     known (max_runtime_seconds, or in auto mode learned from past runs),
//     the beet's deadline is the end of that limit instead of the mode's:
//     the start shows the job is alive, so silence is not judged until the
//     run should be over. A run past its limit turns the beet down;
//   - starts and logs are not counted as events: the rhythm is learned
//     from the runs' ends (successes and failures).

// minRunsToLearn is how many completed runs an auto beet needs before it
// derives a run-time limit from them.
const minRunsToLearn = 3

// applySignals is ApplyEvents for a group with job signals, or with no
// counted events (only starts and logs), or for a beet that is down (a
// failure may have turned it down while learning): the signals are applied
// one by one in time order; a group without signals is one success.
func applySignals(p *Params, b *beet.Beet, sp beet.EventSpan) ([]beet.Flip, error) {
	signals, count := sp.Signals, 1
	if signals == nil && sp.Count > 0 {
		signals, count = []beet.Signal{{At: sp.Last, Kind: beet.KindPing}}, sp.Count
	}
	first := sp.First
	if len(sp.Signals) > 0 && (sp.Count == 0 || sp.Signals[0].At.Before(first)) {
		first = sp.Signals[0].At
	}
	if first.IsZero() {
		return nil, nil // only logs: nothing to judge
	}
	// Deadlines before the group are judged with the run that was open then.
	open := b.Runs.StartedAt
	b.Runs.StartedAt = sp.OpenRun
	flips, err := applyDeadlines(p, b, first, maxLateDeadlines)
	b.Runs.StartedAt = open
	if err != nil {
		return flips, err
	}
	for _, s := range signals {
		if s.Kind == beet.KindStart {
			continue // the run deadline is set once the group is applied
		}
		at := s.At
		if b.LastEventAt != nil && b.LastEventAt.After(at) {
			at = *b.LastEventAt // a later group is already in
		}
		var downSince *time.Time
		if b.Status == beet.StatusDown {
			downSince = &b.StatusSince
		}
		if s.Kind == beet.KindFail {
			flips, err = applyFailure(p, b, s, at, sp.Maintenance, flips)
			if err != nil {
				return flips, err
			}
			b.LastEventAt = &at
			continue
		}
		d, err := onEvents(p, b, at, count, downSince, sp.Maintenance)
		if err != nil {
			return flips, err
		}
		if f := d.Flip; f != nil && f.Kind == beet.FlipRecovery && b.Status == beet.StatusDown && sp.Signals != nil {
			f.Reason = "The job succeeded at " + clock(b, s.At) + codeSuffix(s.ExitCode, " with exit code %d") +
				" after being down for " + Duration(at.Sub(b.StatusSince)) + "."
		}
		flips = apply(b, d, flips)
		b.LastEventAt = &at
	}
	setRunDeadline(b)
	return flips, nil
}

// applyFailure turns b down for a reported failure. The run still
// happened: an auto beet's model learns it, as long as b is not down.
func applyFailure(p *Params, b *beet.Beet, s beet.Signal, at time.Time, freeze bool, flips []beet.Flip) ([]beet.Flip, error) {
	switch b.Status {
	case beet.StatusPaused:
		return flips, nil
	case beet.StatusDown:
		return flips, nil // already down; the failure changes nothing
	}
	if b.Detection.Mode == beet.ModeAuto {
		d, err := onEvents(p, b, at, 1, nil, freeze)
		if err != nil {
			return flips, err
		}
		if d.Model != nil {
			b.Model = d.Model
		}
	}
	f := flipAt(b, s.At, beet.StatusDown, beet.FlipFailed,
		"The job reported failure"+codeSuffix(s.ExitCode, " (exit code %d)")+" at "+clock(b, s.At)+".")
	f.Observed, f.Expected = ptr(0), ptr(1) // runs that succeeded
	return apply(b, Decision{Flip: f}, flips), nil
}

// setRunDeadline makes the end of b's open run's limit its deadline.
func setRunDeadline(b *beet.Beet) {
	if b.Runs.StartedAt == nil || !watching(b.Status) {
		return
	}
	if limit, _ := RunLimit(b); limit > 0 {
		due := b.Runs.StartedAt.Add(limit)
		b.DueAt = &due
	}
}

// watching: the statuses in which an overrun turns a beet down.
func watching(s beet.Status) bool {
	return s == beet.StatusNew || s == beet.StatusLearning || s == beet.StatusUp || s == beet.StatusAnomalous
}

// onRunDeadline is OnDeadline for a beet with an open run and a run-time
// limit: its deadline is the limit's end, and passing it turns the beet
// down. ok is false when the run does not decide (no open run, no limit):
// the mode's detection does.
func onRunDeadline(b *beet.Beet, due time.Time) (d Decision, ok bool) {
	if b.Runs.StartedAt == nil || !watching(b.Status) {
		return Decision{}, false
	}
	limit, learnedLimit := RunLimit(b)
	if limit <= 0 {
		return Decision{}, false
	}
	start := *b.Runs.StartedAt
	end := start.Add(limit)
	if due.Before(end) {
		return Decision{Due: &end}, true // the limit was raised meanwhile
	}
	loc := location(b)
	reason := fmt.Sprintf("Started at %s, still running after %s", start.In(loc).Format("15:04 MST"), Duration(due.Sub(start)))
	if usual := usualRuns(b.Runs.RecentMS); usual != "" {
		reason += "; runs usually take " + usual
	}
	if !learnedLimit {
		reason += fmt.Sprintf("; the limit is %s", Duration(limit))
	}
	f := &beet.Flip{BeetID: b.ID, At: due, From: b.Status, To: beet.StatusDown, Kind: beet.FlipOverrun,
		Reason: reason + ".", Observed: ptr(due.Sub(start).Seconds()), Expected: ptr(limit.Seconds())}
	return Decision{Flip: f}, true
}

// RunLimit is how long b's runs may take before the beet goes down:
// max_runtime_seconds when set; in auto mode, once minRunsToLearn runs
// completed, twice the longest recent run (at least 5 minutes more than
// it); otherwise 0, no limit. learned says the limit was derived.
func RunLimit(b *beet.Beet) (limit time.Duration, learned bool) {
	if s := b.Detection.MaxRuntimeSeconds; s > 0 {
		return time.Duration(s) * time.Second, false
	}
	if b.Detection.Mode != beet.ModeAuto || len(b.Runs.RecentMS) < minRunsToLearn {
		return 0, false
	}
	longest := time.Duration(slices.Max(b.Runs.RecentMS)) * time.Millisecond
	return max(2*longest, longest+5*time.Minute), true
}

// usualRuns says how long recent runs took, without the shortest and
// longest tenth: "3-5 min", "400 ms-2.5 s", or "4 min" when they agree.
func usualRuns(ms []int64) string {
	if len(ms) == 0 {
		return ""
	}
	s := slices.Sorted(slices.Values(ms))
	cut := len(s) / 10
	lo, hi := Duration(time.Duration(s[cut])*time.Millisecond), Duration(time.Duration(s[len(s)-1-cut])*time.Millisecond)
	switch {
	case lo == hi:
		return lo
	case strings.HasPrefix(lo, "under "):
		return "up to " + hi
	}
	// "3 min-5 min" reads better as "3-5 min"; "2 h 5 min-3 h" stays.
	if n, unit, ok := strings.Cut(lo, " "); ok && !strings.Contains(unit, " ") && strings.HasSuffix(hi, " "+unit) && !strings.Contains(strings.TrimSuffix(hi, " "+unit), " ") {
		lo = n
	}
	return lo + "-" + hi
}

// RunExpectation tells a person how b's runs are watched, or "" when b
// never reported a run.
func RunExpectation(b *beet.Beet) string {
	limit, learnedLimit := RunLimit(b)
	usual := usualRuns(b.Runs.RecentMS)
	switch {
	case limit > 0 && learnedLimit:
		return fmt.Sprintf("Runs usually take %s; a run still going after %s turns the beet down.", usual, Duration(limit))
	case limit > 0:
		return fmt.Sprintf("A run still going after %s turns the beet down.", Duration(limit))
	case usual != "" && b.Detection.Mode == beet.ModeAuto:
		return fmt.Sprintf("Runs usually take %s; a run-time limit is learned after %d runs.", usual, minRunsToLearn)
	case usual != "":
		return fmt.Sprintf("Runs usually take %s; set a run-time limit (max_runtime_seconds) to be told when one runs too long.", usual)
	}
	return ""
}

func clock(b *beet.Beet, t time.Time) string { return t.In(location(b)).Format("15:04 MST") }

func codeSuffix(code *int, format string) string {
	if code == nil {
		return ""
	}
	return fmt.Sprintf(format, *code)
}
