package detect

import (
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// upAfter returns a period beet (1 min, no grace) that came up with an
// event at last and is due a minute later.
func upAfter(last time.Time) *beet.Beet {
	b := &beet.Beet{ID: 9, Status: beet.StatusNew, Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 60}}
	if _, err := ApplyEvents(b, beet.EventSpan{First: last, Last: last, Count: 1}); err != nil {
		panic(err)
	}
	return b
}

func changed(t *testing.T, b *beet.Beet, d beet.Detection, now time.Time) []beet.Flip {
	t.Helper()
	was := *b
	b.Detection = d
	flips, err := ApplySettings(was, b, now)
	if err != nil {
		t.Fatal(err)
	}
	return flips
}

// TestSettingsCronOverdue: switched to a schedule whose run passed
// without an event, the beet goes down now, naming the missed run.
func TestSettingsCronOverdue(t *testing.T) {
	last := time.Date(2026, 1, 1, 2, 0, 10, 0, time.UTC)
	b := upAfter(last)
	now := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	b.Detection = beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 2 * 86400}
	flips := changed(t, b, beet.Detection{Mode: beet.ModeCron, Cron: "0 2 * * *", Timezone: "UTC", GraceSeconds: 600}, now)
	if len(flips) != 1 || flips[0].Kind != beet.FlipMissedRun || !flips[0].At.Equal(now) ||
		flips[0].Reason != "Missed the run due at Jan 2 02:00 UTC: no event by 02:10 (every day at 02:00 UTC)." {
		t.Fatalf("flips %+v", flips) // the zone not in parentheses inside the reason's
	}
	if b.Status != beet.StatusDown || b.DueAt != nil || b.StatusReason != flips[0].Reason || !b.StatusSince.Equal(now) {
		t.Fatalf("beet %+v", b)
	}
}

// TestSettingsKeepResumeGrace: a beet resumed after its last event keeps
// the deadline counted from the resume when its period changes.
func TestSettingsKeepResumeGrace(t *testing.T) {
	last := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	b := upAfter(last)
	resumed := last.Add(time.Hour)
	due := resumed.Add(time.Minute)
	b.StatusSince, b.DueAt = resumed, &due
	now := resumed.Add(10 * time.Second)
	if flips := changed(t, b, beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 60, GraceSeconds: 30}, now); len(flips) != 0 {
		t.Fatalf("flips %+v", flips)
	}
	if want := resumed.Add(90 * time.Second); b.Status != beet.StatusUp || b.DueAt == nil || !b.DueAt.Equal(want) {
		t.Fatalf("beet %+v, want up, due at %v", b, want)
	}
	// Judged later, the silence names the last event, not the resume.
	f, err := OnDeadline(b)
	if err != nil || f.Flip == nil || !strings.HasPrefix(f.Flip.Reason, "No event since Jan 1 12:00 UTC (1 h 1 min);") {
		t.Fatalf("deadline: %+v, %v", f.Flip, err)
	}
}

// TestSettingsLeaveAlertsAlone: down, anomalous, paused and new beets keep
// their status and reason; an anomalous beet switched to period mode gets
// the period's deadline and can go down; what auto mode learned is
// dropped on leaving it; a zone change of a period beet changes nothing.
func TestSettingsLeaveAlertsAlone(t *testing.T) {
	last := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	now := last.Add(time.Minute)
	for _, st := range []beet.Status{beet.StatusDown, beet.StatusPaused, beet.StatusAnomalous, beet.StatusNew} {
		b := &beet.Beet{ID: 9, Status: st, StatusReason: "as it was", StatusSince: last, Timezone: "UTC", LastEventAt: &last,
			Detection: beet.Detection{Mode: beet.ModeAuto}, Model: []byte{1}}
		if st == beet.StatusNew {
			b.LastEventAt = nil
		}
		if flips := changed(t, b, beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600}, now); len(flips) != 0 {
			t.Errorf("%s: flips %+v", st, flips)
		}
		if b.Status != st || b.StatusReason != "as it was" || b.Model != nil {
			t.Errorf("%s: beet %+v", st, b)
		}
		if want := st == beet.StatusAnomalous; (b.DueAt != nil) != want {
			t.Errorf("%s: due %v", st, b.DueAt)
		}
		if st == beet.StatusAnomalous {
			d, err := OnDeadline(b)
			if err != nil || d.Flip == nil || d.Flip.From != beet.StatusAnomalous || d.Flip.To != beet.StatusDown {
				t.Errorf("anomalous period beet past its deadline: %+v, %v", d.Flip, err)
			}
		}
	}
	b := upAfter(last)
	before := *b
	b.Timezone = "Europe/Riga"
	if flips, err := ApplySettings(before, b, now); err != nil || len(flips) != 0 || b.StatusReason != before.StatusReason || !b.DueAt.Equal(*before.DueAt) {
		t.Errorf("zone change of a period beet: %+v, %v: %+v", flips, err, b)
	}
}

// TestSettingsAutoZone: an auto beet's deadline is worked out again from
// its model when its zone changes; it stays up, and its reason says so.
func TestSettingsAutoZone(t *testing.T) {
	b := &beet.Beet{ID: 9, Status: beet.StatusNew, Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}}
	at := time.Date(2026, 1, 5, 6, 30, 0, 0, time.UTC)
	for d := range 21 {
		day := at.AddDate(0, 0, d)
		if _, err := ApplyEvents(b, beet.EventSpan{First: day, Last: day, Count: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if b.Status != beet.StatusUp || b.DueAt == nil {
		t.Fatalf("a daily job after 3 weeks: %+v", b)
	}
	was := *b
	b.Timezone = "Europe/Riga"
	flips, err := ApplySettings(was, b, b.LastEventAt.Add(time.Hour))
	if err != nil || len(flips) != 0 || b.Status != beet.StatusUp || b.DueAt == nil ||
		!strings.HasPrefix(b.StatusReason, "Time zone changed to Europe/Riga. Learned: ") {
		t.Fatalf("after a zone change: %+v, %v: %+v", flips, err, b)
	}
}

// TestSettingsAnomalousToAuto: an anomalous beet switched to auto mode
// keeps its alarm until its next event, which ends it (a recovery, so the
// incident's message goes out) into learning, as the model starts afresh.
func TestSettingsAnomalousToAuto(t *testing.T) {
	last := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	b := &beet.Beet{ID: 9, Status: beet.StatusAnomalous, StatusReason: "surge", StatusSince: last, Timezone: "UTC",
		LastEventAt: &last, Detection: beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600}}
	if flips := changed(t, b, beet.Detection{Mode: beet.ModeAuto}, last.Add(time.Minute)); len(flips) != 0 ||
		b.Status != beet.StatusAnomalous || b.DueAt != nil || b.Model != nil {
		t.Fatalf("flips %+v, beet %+v", flips, b)
	}
	next := last.Add(2 * time.Minute)
	flips, err := ApplyEvents(b, beet.EventSpan{First: next, Last: next, Count: 1})
	if err != nil || len(flips) != 1 || flips[0].Kind != beet.FlipRecovery || flips[0].To != beet.StatusLearning ||
		beet.NotifyEvent(&flips[0]) != beet.EventUp {
		t.Fatalf("next event: %+v, %v", flips, err)
	}
}
