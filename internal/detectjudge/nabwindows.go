package detectjudge

import (
	"fmt"
	"io"
	"math"
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
