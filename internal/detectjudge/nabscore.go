package detectjudge

import (
	"math"
	"sort"
)

// This file scores detections the NAB way, following NAB v1.1 (nab/sweeper.py
// calcSweepScore + calcScoreByThreshold, and the normalisation in
// nab/runner.py). A detector here raises binary alarms instead of anomaly
// scores, so there is no threshold to optimise: every row holding a raised
// alarm is a detection.

// A Profile is a NAB cost matrix (profiles.json). tnWeight is unused by NAB's
// scoring and therefore left out.
type Profile struct {
	Name string
	TP   float64 // reward for the earliest detection in a window, at the window's start
	FN   float64 // cost of a window with no detection
	FP   float64 // cost of a detection outside all windows, far from any window
}

// StandardProfile is NAB's standard cost matrix.
var StandardProfile = Profile{Name: "standard", TP: 1, FN: 1, FP: 0.11}

// A RowWindow is a labelled anomaly window as inclusive row indices.
type RowWindow struct{ First, Last int }

// ProbationLength returns how many leading rows NAB leaves unscored: 15% of
// the rows, at most 750 (sweeper.py: min(floor(0.15·n), 0.15·5000)).
func ProbationLength(rows int) int {
	return min(int(math.Floor(0.15*float64(rows))), 750)
}

// ScaledSigmoid is NAB's weight for a detection at relative position y: y in
// [-1, 0] runs from a window's left edge to its right edge, y > 0 measures the
// distance past the end of the preceding window in window widths. It is
// 2/(1+exp(5y)) - 1: 0.9866 at y = -1, 0 at y = 0, -0.9866 at y = 1, and -1
// from y = 3 on (sweeper.py's cut-off).
func ScaledSigmoid(y float64) float64 {
	if y >= 3 {
		return -1
	}
	return 2/(1+math.Exp(5*y)) - 1
}

// A NABScore is the score of one series (or, summed, of the corpus) for one
// profile.
type NABScore struct {
	Raw     float64 // NAB's raw score: window rewards and FN costs plus FP charges
	Null    float64 // raw score of a detector that never fires: -FN per scorable window
	Perfect float64 // TP per labelled window (runner.py normalize: tpCount·tpWeight)
	Windows int     // labelled windows
	Hits    int     // scorable windows with at least one detection
	FPs     int     // scored detections outside every window
	Ignored int     // detections inside the probationary rows, not scored
}

// Normalised returns 100·(raw − null)/(perfect − null): 0 for a detector that
// never fires, 100 for one detection at the start of every window.
func (s NABScore) Normalised() float64 {
	if s.Perfect == s.Null {
		return 0
	}
	return 100 * (s.Raw - s.Null) / (s.Perfect - s.Null)
}

// Add sums two scores; NAB's corpus score is the sum over files of raw,
// null and perfect, normalised once.
func (s NABScore) Add(o NABScore) NABScore {
	return NABScore{
		Raw: s.Raw + o.Raw, Null: s.Null + o.Null, Perfect: s.Perfect + o.Perfect,
		Windows: s.Windows + o.Windows, Hits: s.Hits + o.Hits, FPs: s.FPs + o.FPs, Ignored: s.Ignored + o.Ignored,
	}
}

// ScoreNAB scores one series of rows rows long whose labelled windows are
// windows (sorted, not overlapping) for the rows flagged in detected.
//
// As in sweeper.py:
//   - rows before ProbationLength(rows) are not scored at all; a window is
//     scorable if at least one of its rows is past probation;
//   - a detection at row i inside window [l, r] is worth
//     TP·S(−(r−i+1)/(r−l+1))/S(−1), so a detection on the first row earns
//     exactly TP and later ones less; only the best (earliest) detection of a
//     window counts, and a window without one costs FN;
//   - a detection outside every window costs FP·S(|r'−i|/(w'−1)) where r' and
//     w' are the last row and width of the closest preceding window (NAB's
//     sigmoid is negative there, so a detection just after a window is
//     charged little and one far after it nearly FP), or FP in full when no
//     window precedes it.
func ScoreNAB(rows int, windows []RowWindow, detected []bool, p Profile) NABScore {
	ws := append([]RowWindow(nil), windows...)
	sort.Slice(ws, func(i, j int) bool { return ws[i].First < ws[j].First })
	prob := ProbationLength(rows)
	maxTP := ScaledSigmoid(-1)

	s := NABScore{Windows: len(ws), Perfect: p.TP * float64(len(ws))}
	best := make([]float64, len(ws)) // best weighted reward per window
	hit := make([]bool, len(ws))
	for _, w := range ws {
		if w.Last >= prob {
			s.Null -= p.FN
		}
	}
	wi := 0 // index of the first window whose Last >= i
	for i := 0; i < rows && i < len(detected); i++ {
		for wi < len(ws) && ws[wi].Last < i {
			wi++
		}
		if !detected[i] {
			continue
		}
		if i < prob {
			s.Ignored++
			continue
		}
		if wi < len(ws) && ws[wi].First <= i {
			w := ws[wi]
			width := float64(w.Last - w.First + 1)
			v := p.TP * ScaledSigmoid(-float64(w.Last-i+1)/width) / maxTP
			if !hit[wi] || v > best[wi] {
				best[wi], hit[wi] = v, true
			}
			continue
		}
		s.FPs++
		if wi == 0 {
			s.Raw -= p.FP // no window before this row
			continue
		}
		pw := ws[wi-1]
		width := float64(pw.Last - pw.First + 1)
		y := 3.0 // a one-row window: sweeper.py divides by zero, i.e. "far away"
		if width > 1 {
			y = math.Abs(float64(pw.Last-i)) / (width - 1)
		}
		s.Raw += p.FP * ScaledSigmoid(y)
	}
	for k, w := range ws {
		switch {
		case w.Last < prob: // entirely in probation: neither rewarded nor charged
		case hit[k]:
			s.Raw += best[k]
			s.Hits++
		default:
			s.Raw -= p.FN
		}
	}
	return s
}
