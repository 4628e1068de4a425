package detectjudge

import (
	"fmt"
	"io"
	"math"
	"sort"
	"time"

	"github.com/beethq/beet/internal/detect"
)

// A NABWindow is one labelled window of a NAB series as a detector met
// it: whether and how late it was found, what the standard profile paid
// for it, and the events seen in it against what the model expected when
// the window began (issue 12: which windows are left, and why).
type NABWindow struct {
	Series      string
	First, Last time.Time // the window's first and last rows
	Probation   bool      // entirely in probation: not scored
	Found       bool
	At          time.Time // the earliest detected row in the window
	Through     float64   // how far through the window At is, 0 (first row) to 1 (last)
	Reward      float64   // what the window adds to the raw score: the detection's weight, or −FN
	Observed    float64   // events in the window
	// Expected is the events auto's rate model expected over the window,
	// as the model stood at its first row (NaN for other detectors, or
	// while the model is not a rate model).
	Expected float64
}

// NABWindows lists every window of every series for detectors from f,
// scored with profile p as ScoreNAB scores them.
func NABWindows(series []NABSeries, f Factory, p Profile) ([]NABWindow, error) {
	var out []NABWindow
	maxTP := ScaledSigmoid(-1)
	for _, s := range series {
		det, _, _, err := ReplayNAB(s, f)
		if err != nil {
			return nil, err
		}
		prob := ProbationLength(len(s.Times))
		rows := nabRows(s)
		for _, w := range s.Windows {
			nw := NABWindow{Series: s.Name, First: s.Times[w.First], Last: s.Times[w.Last], Probation: w.Last < prob, Reward: -p.FN, Expected: math.NaN()}
			width := float64(w.Last - w.First + 1)
			for i := max(w.First, prob); i <= w.Last; i++ {
				if det[i] {
					nw.Found, nw.At = true, s.Times[i]
					nw.Through = float64(i-w.First) / max(1, width-1)
					nw.Reward = p.TP * ScaledSigmoid(-float64(w.Last-i+1)/width) / maxTP
					break
				}
			}
			if nw.Probation {
				nw.Reward = 0
			}
			for i := w.First; i <= w.Last; i++ {
				nw.Observed += float64(s.Values[i])
			}
			// The model as the rows before the window left it.
			d := f(nabInfo(s))
			if _, err := Replay(skipZero{d}, rows[:w.First], s.Times[w.First]); err != nil {
				return nil, err
			}
			if a, ok := d.(*autoDetector); ok {
				if m, err := detect.LoadRateModel(a.b.Model, time.UTC); err == nil {
					nw.Expected = m.Expected(s.Times[w.First], s.Times[w.Last].Add(s.Bucket))
				}
			}
			out = append(out, nw)
		}
	}
	return out, nil
}

// WriteNABWindows prints ws as a Markdown table.
func WriteNABWindows(w io.Writer, ws []NABWindow) {
	fmt.Fprintf(w, "\n## NAB windows\n\nEach labelled window: the earliest detection in it and how far through the window it came (0%% its first row, 50%% its middle, where NAB centres the labelled anomaly), what it added to the standard raw score (a miss costs 1), and the events in it against what auto's rate model expected as the window began.\n\n")
	fmt.Fprintf(w, "| series | window | found | through | reward | observed | expected | observed/expected |\n|---|---|---|---:|---:|---:|---:|---:|\n")
	for _, x := range ws {
		found := "no"
		through := ""
		if x.Found {
			found, through = x.At.Format("Jan 2 15:04"), fmt.Sprintf("%.0f%%", 100*x.Through)
		}
		if x.Probation {
			found = "probation"
		}
		fmt.Fprintf(w, "| %s | %s – %s | %s | %s | %+.2f | %.0f | %.0f | %.2f |\n", x.Series, x.First.Format("Jan 2 15:04"), x.Last.Format("Jan 2 15:04"),
			found, through, x.Reward, x.Observed, x.Expected, x.Observed/x.Expected)
	}
}

// A NABFalsePositive is one row NAB charges as a false positive: the
// alarms raised on it, what it cost, and the alarm before it, so a second
// page of one episode can be told from a new one.
type NABFalsePositive struct {
	Series string
	Row    time.Time
	Kinds  string  // the kinds raised on the row, e.g. "surge"
	Cost   float64 // what the row took from the standard raw score
	// After is how far past the end of the preceding window the row is,
	// in window widths (NaN: no window before it).
	After float64
	// Prev is the previous alarm raised in the series (zero: none), and
	// Recovered when it recovered before this row (zero: still open or none).
	Prev, Recovered time.Time
	PrevKind        string
}

// NABFalsePositives lists every row of every series that ScoreNAB charges
// as a false positive with profile p, for detectors from f.
func NABFalsePositives(series []NABSeries, f Factory, p Profile) ([]NABFalsePositive, error) {
	var out []NABFalsePositive
	for _, s := range series {
		d := f(nabInfo(s))
		alarms, err := Replay(skipZero{d}, nabRows(s), s.Times[len(s.Times)-1].Add(s.Bucket))
		if err != nil {
			return nil, err
		}
		rowOf := func(at time.Time) int {
			return max(0, sort.Search(len(s.Times), func(i int) bool { return s.Times[i].After(at) })-1)
		}
		prob := ProbationLength(len(s.Times))
		inWindow := func(i int) (in bool, prev int) {
			prev = -1
			for k, w := range s.Windows {
				if w.First <= i && i <= w.Last {
					return true, k
				}
				if w.Last < i {
					prev = k
				}
			}
			return false, prev
		}
		var lastRaise, lastRecovery time.Time
		var lastKind string
		open := map[string]time.Time{}
		done := map[int]bool{}
		for _, a := range alarms {
			if a.Recovery {
				lastRecovery = a.At
				delete(open, a.Kind)
				continue
			}
			i := rowOf(a.At)
			if in, pw := inWindow(i); !in && i >= prob {
				if done[i] {
					out[len(out)-1].Kinds += "+" + a.Kind
				} else {
					fp := NABFalsePositive{Series: s.Name, Row: s.Times[i], Kinds: a.Kind, Cost: p.FP, After: math.NaN(), Prev: lastRaise, PrevKind: lastKind}
					if !lastRecovery.Before(lastRaise) && !lastRaise.IsZero() {
						fp.Recovered = lastRecovery
					}
					if pw >= 0 {
						w := s.Windows[pw]
						width := float64(w.Last - w.First + 1)
						fp.After = 3
						if width > 1 {
							fp.After = float64(i-w.Last) / (width - 1)
						}
						fp.Cost = -p.FP * ScaledSigmoid(fp.After)
					}
					out = append(out, fp)
					done[i] = true
				}
			}
			lastRaise, lastKind = a.At, a.Kind
			open[a.Kind] = a.At
		}
	}
	return out, nil
}

// WriteNABFalsePositives prints fps as a Markdown table.
func WriteNABFalsePositives(w io.Writer, fps []NABFalsePositive) {
	fmt.Fprintf(w, "\n## NAB false positives\n\nEach row NAB charges outside the windows: the alarms raised on it, what it cost the standard raw score, how far past the preceding window it came (in that window's widths; from 3 on the full charge), and the alarm raised before it (and its recovery, if it recovered before this one).\n\n")
	fmt.Fprintf(w, "| series | row | raised | cost | past window | previous alarm | its recovery |\n|---|---|---|---:|---:|---|---|\n")
	total := 0.0
	for _, x := range fps {
		after := ""
		if !math.IsNaN(x.After) {
			after = fmt.Sprintf("%.2f", x.After)
		}
		prev, rec := "", ""
		if !x.Prev.IsZero() {
			prev = x.PrevKind + " " + x.Prev.Format("Jan 2 15:04")
		}
		if !x.Recovered.IsZero() {
			rec = x.Recovered.Format("Jan 2 15:04")
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.3f | %s | %s | %s |\n", x.Series, x.Row.Format("Mon Jan 2 15:04"), x.Kinds, x.Cost, after, prev, rec)
		total += x.Cost
	}
	fmt.Fprintf(w, "\n%d false-positive rows, %.3f raw all together.\n", len(fps), total)
}
