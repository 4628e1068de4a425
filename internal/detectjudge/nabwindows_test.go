package detectjudge

import (
	"math"
	"strings"
	"testing"
	"time"
)

// A steady beet (10 events every 5 minutes for three weeks) goes silent
// inside one labelled window and carries on as usual through another: the
// listing says auto found the first after the silence began, paid for it
// by its position, and missed the second, where as many events came as
// the model expected.
func TestNABWindowsListsFoundAndMissed(t *testing.T) {
	base := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	s := NABSeries{Name: "steady.csv", Bucket: 5 * time.Minute,
		Windows: []RowWindow{{First: 4000, Last: 4100}, {First: 5000, Last: 5100}}}
	for i := range 21 * 288 {
		s.Times = append(s.Times, base.Add(time.Duration(i)*5*time.Minute))
		v := 10
		if i >= 4030 && i < 4100 {
			v = 0 // six hours without an event
		}
		s.Values = append(s.Values, v)
	}
	ws, err := NABWindows([]NABSeries{s}, NewAuto(LiveEngine), Profile{Name: "standard", TP: 1, FN: 1, FP: 0.11})
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 {
		t.Fatalf("%d windows, want 2", len(ws))
	}
	out, miss := ws[0], ws[1]
	if !out.Found || out.Through < 0.3 || out.Through > 0.7 || out.Reward <= 0 || out.At.Before(s.Times[4030]) {
		t.Errorf("outage window: %+v; want found after row 4030, paid by its position", out)
	}
	if out.Observed != 310 {
		t.Errorf("outage window observed %v events, want 310 (30 rows before it, the last row after)", out.Observed)
	}
	if miss.Found || miss.Reward != -1 {
		t.Errorf("quiet window: %+v; want missed, costing 1", miss)
	}
	if miss.Observed != 1010 || math.Abs(miss.Expected-1010) > 50 {
		t.Errorf("quiet window: observed %v, expected %v; want 1010 and about 1010", miss.Observed, miss.Expected)
	}
	var b strings.Builder
	WriteNABWindows(&b, ws)
	if !strings.Contains(b.String(), "| steady.csv | Jan 22 08:40 – Jan 22 17:00 | no |") {
		t.Errorf("table:\n%s", b.String())
	}
}
