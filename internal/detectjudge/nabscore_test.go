package detectjudge

import (
	"math"
	"testing"
)

// flags returns n row flags with the given rows set.
func flags(n int, rows ...int) []bool {
	d := make([]bool, n)
	for _, r := range rows {
		d[r] = true
	}
	return d
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// A 1000-row series (probation 150) with two windows.
var (
	testRows    = 1000
	testWindows = []RowWindow{{First: 300, Last: 399}, {First: 700, Last: 749}}
)

func TestScoreNABNullAndPerfect(t *testing.T) {
	for _, p := range []Profile{StandardProfile, {Name: "low_fp", TP: 1, FN: 1, FP: 0.22}, {Name: "low_fn", TP: 1, FN: 2, FP: 0.11}} {
		null := ScoreNAB(testRows, testWindows, flags(testRows), p)
		if !near(null.Raw, -2*p.FN) || !near(null.Normalised(), 0) {
			t.Errorf("%s: never firing: raw %v, normalised %v; want %v, 0", p.Name, null.Raw, null.Normalised(), -2*p.FN)
		}
		perfect := ScoreNAB(testRows, testWindows, flags(testRows, 300, 700), p)
		if !near(perfect.Raw, 2*p.TP) || !near(perfect.Normalised(), 100) {
			t.Errorf("%s: perfect: raw %v, normalised %v; want %v, 100", p.Name, perfect.Raw, perfect.Normalised(), 2*p.TP)
		}
		// Later detections in a window add nothing: only the first counts.
		more := ScoreNAB(testRows, testWindows, flags(testRows, 300, 350, 399, 700, 701), p)
		if !near(more.Raw, perfect.Raw) {
			t.Errorf("%s: extra detections inside windows changed the score: %v, want %v", p.Name, more.Raw, perfect.Raw)
		}
	}
}

func TestScoreNABEarlierIsBetter(t *testing.T) {
	start := ScoreNAB(testRows, testWindows, flags(testRows, 300), StandardProfile).Raw
	mid := ScoreNAB(testRows, testWindows, flags(testRows, 350), StandardProfile).Raw
	end := ScoreNAB(testRows, testWindows, flags(testRows, 399), StandardProfile).Raw
	if !(start > mid && mid > end) {
		t.Errorf("window start %v, middle %v, end %v: want strictly decreasing", start, mid, end)
	}
	// A detection on the last row of a window is still worth a little
	// (NAB's position is −1/width there, not 0) and beats missing it.
	if miss := ScoreNAB(testRows, testWindows, flags(testRows), StandardProfile).Raw; !(end > miss) {
		t.Errorf("detection at window end %v not better than none %v", end, miss)
	}
}

func TestScoreNABFalsePositives(t *testing.T) {
	base := ScoreNAB(testRows, testWindows, flags(testRows, 300), StandardProfile)
	for _, row := range []int{200, 400, 450, 650, 999} {
		s := ScoreNAB(testRows, testWindows, flags(testRows, 300, row), StandardProfile)
		if !(s.Raw < base.Raw) || s.FPs != 1 {
			t.Errorf("FP at row %d: raw %v (FPs %d), want below %v", row, s.Raw, s.FPs, base.Raw)
		}
	}
	// Before any window an FP costs fpWeight in full; right after a window
	// it costs little, and more the further it is (NAB's sigmoid).
	before := ScoreNAB(testRows, testWindows, flags(testRows, 300, 200), StandardProfile).Raw - base.Raw
	if !near(before, -0.11) {
		t.Errorf("FP before the first window costs %v, want -0.11", before)
	}
	justAfter := ScoreNAB(testRows, testWindows, flags(testRows, 300, 400), StandardProfile).Raw - base.Raw
	farAfter := ScoreNAB(testRows, testWindows, flags(testRows, 300, 650), StandardProfile).Raw - base.Raw
	if !(justAfter > farAfter && justAfter < 0 && farAfter >= -0.11) {
		t.Errorf("FP cost just after a window %v, far after %v: want -0.11 <= far < just < 0", justAfter, farAfter)
	}
}

func TestScoreNABProbation(t *testing.T) {
	if got := ProbationLength(1000); got != 150 {
		t.Errorf("ProbationLength(1000) = %d, want 150", got)
	}
	if got := ProbationLength(15902); got != 750 {
		t.Errorf("ProbationLength(15902) = %d, want 750 (the cap)", got)
	}
	base := ScoreNAB(testRows, testWindows, flags(testRows, 300), StandardProfile)
	s := ScoreNAB(testRows, testWindows, flags(testRows, 0, 10, 149, 300), StandardProfile)
	if !near(s.Raw, base.Raw) || s.Ignored != 3 || s.FPs != 0 {
		t.Errorf("probation detections: raw %v ignored %d FPs %d; want %v, 3, 0", s.Raw, s.Ignored, s.FPs, base.Raw)
	}
	// Row 150 is the first scored row.
	if s := ScoreNAB(testRows, testWindows, flags(testRows, 150, 300), StandardProfile); s.FPs != 1 {
		t.Errorf("detection on the first scored row not charged")
	}
	// A window entirely inside probation is neither rewarded nor charged
	// (sweeper.py only knows windows that reach a scored row), but still
	// counts towards "perfect" (runner.py counts every labelled window).
	s = ScoreNAB(testRows, []RowWindow{{First: 100, Last: 120}, {First: 300, Last: 399}}, flags(testRows), StandardProfile)
	if !near(s.Null, -1) || !near(s.Raw, -1) || !near(s.Perfect, 2) {
		t.Errorf("window in probation: null %v raw %v perfect %v; want -1, -1, 2", s.Null, s.Raw, s.Perfect)
	}
}

// TestScoreNABHandComputed checks a small example worked by hand from
// NAB's formulas. 20 rows, so probation is floor(0.15·20) = 3 rows; one
// window on rows 10-14 (width 5). Detections:
//   - row 1: in probation, ignored;
//   - row 5: before any window, an FP costing the full 0.11;
//   - row 12: in the window at position −(14−12+1)/5 = −0.6, worth
//     S(−0.6)/S(−1) = 0.905148254/0.986614298 = 0.917428680;
//   - row 13: later in the same window, ignored;
//   - row 17: |14−17|/(5−1) = 0.75 past the window, costing
//     0.11·S(0.75) = 0.11·(−0.954045260) = −0.104944979.
//
// Raw = 0.917428680 − 0.11 − 0.104944979 = 0.702483702; null = −1,
// perfect = 1, so normalised = 100·1.702483702/2 = 85.124185.
func TestScoreNABHandComputed(t *testing.T) {
	s := ScoreNAB(20, []RowWindow{{First: 10, Last: 14}}, flags(20, 1, 5, 12, 13, 17), StandardProfile)
	if math.Abs(s.Raw-0.702483702) > 1e-8 {
		t.Errorf("raw = %.9f, want 0.702483702", s.Raw)
	}
	if math.Abs(s.Normalised()-85.124185) > 1e-5 {
		t.Errorf("normalised = %.6f, want 85.124185", s.Normalised())
	}
	if s.Hits != 1 || s.FPs != 2 || s.Ignored != 1 {
		t.Errorf("hits %d FPs %d ignored %d, want 1, 2, 1", s.Hits, s.FPs, s.Ignored)
	}
	// Corpus scores normalise summed parts, not the mean of file scores.
	sum := s.Add(ScoreNAB(20, []RowWindow{{First: 10, Last: 14}}, flags(20), StandardProfile))
	if math.Abs(sum.Normalised()-100*(0.702483702-1+2)/4) > 1e-5 {
		t.Errorf("corpus normalised = %.6f", sum.Normalised())
	}
}

func TestScaledSigmoid(t *testing.T) {
	for _, c := range []struct{ y, want float64 }{
		{-1, 0.98661429815}, {-0.5, 0.84828363995}, {0, 0}, {1, -0.98661429815}, {3, -1}, {10, -1},
	} {
		if got := ScaledSigmoid(c.y); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("ScaledSigmoid(%v) = %.11f, want %.11f", c.y, got, c.want)
		}
	}
}
