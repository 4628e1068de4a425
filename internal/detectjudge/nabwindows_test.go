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

// The same steady beet goes silent three times: inside the window, just
// after it (after an hour at 30%), and days later. The false-positive
// listing holds the ones outside it, the one just after the window
// charged less than NAB's full 0.11 and the far one in full, each with the
// alarm before it and its recovery, so a second page of one episode is
// told from a new one: the episode just after the window is flagged as a
// drop and, once silent, as a silence, listed with that drop before it
// and not recovered; the events come back 40 minutes into an hour, and
// nothing is raised at the silence's recovery (the hour's silent minutes
// were read as a drop, a second page of one episode, until
// calmAfterSilence).
func TestNABFalsePositivesListsRows(t *testing.T) {
	base := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	s := NABSeries{Name: "steady.csv", Bucket: 5 * time.Minute, Windows: []RowWindow{{First: 4000, Last: 4100}}}
	for i := range 21 * 288 {
		s.Times = append(s.Times, base.Add(time.Duration(i)*5*time.Minute))
		v := 10
		if i >= 4150 && i < 4162 {
			v = 3 // an hour at 30%, then silent
		}
		if i >= 4030 && i < 4100 || i >= 4162 && i < 4220 || i >= 5500 && i < 5570 {
			v = 0
		}
		s.Values = append(s.Values, v)
	}
	fps, err := NABFalsePositives([]NABSeries{s}, NewAuto(LiveEngine), StandardProfile)
	if err != nil {
		t.Fatal(err)
	}
	if len(fps) != 3 {
		t.Fatalf("%d false positives, want 3: %+v", len(fps), fps)
	}
	near, escalated, far := fps[0], fps[1], fps[2]
	if escalated.Kinds != "silence" || escalated.PrevKind != "drop" || !escalated.Recovered.IsZero() || escalated.Row.Sub(near.Row) > time.Hour {
		t.Errorf("silence after the drop: %+v; want raised within the hour after it, the drop listed before it, not recovered", escalated)
	}
	if far.PrevKind != "silence" || far.Prev.Before(escalated.Row) || far.Recovered.Before(escalated.Row) {
		t.Errorf("silence days later: %+v; want the escalated silence, recovered, listed before it", far)
	}
	if near.Row.Before(s.Times[4150]) || near.Row.After(s.Times[4220]) || near.Cost <= 0 || near.Cost >= 0.11 || near.After < 0.4 || near.After > 1.2 {
		t.Errorf("silence just after the window: %+v; want charged less than 0.11, about half a window past it", near)
	}
	if near.Prev.Before(s.Times[4030]) || near.Recovered.IsZero() {
		t.Errorf("silence just after the window: previous alarm %s %v, recovered %v; want the window's outage, recovered", near.PrevKind, near.Prev, near.Recovered)
	}
	if far.Row.Before(s.Times[5500]) || far.Row.After(s.Times[5570]) || math.Abs(far.Cost-0.11) > 1e-9 {
		t.Errorf("silence days later: %+v; want charged 0.11 in full", far)
	}
	var b strings.Builder
	WriteNABFalsePositives(&b, fps)
	if !strings.Contains(b.String(), "3 false-positive rows") {
		t.Errorf("table:\n%s", b.String())
	}
}
