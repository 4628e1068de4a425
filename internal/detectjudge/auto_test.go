package detectjudge

import (
	"testing"
	"time"

	"github.com/beethq/beet"
)

// TestLearningAlarmIsNotArming: a beet still learning that flags a silence
// (a flip from learning to down) raises an alarm, recovered when it goes
// back to learning, and is not taken for armed by it; the live engine, fed an hourly job, arms at an event once
// its model says so, and raises nothing while learning.
func TestLearningAlarmIsNotArming(t *testing.T) {
	fired := false // the fake flags one silence, 5 h in
	guard := Engine{
		ApplyEvents: func(b *beet.Beet, s beet.EventSpan) ([]beet.Flip, error) {
			switch b.Status {
			case beet.StatusNew:
				b.Status = beet.StatusLearning
				return []beet.Flip{{At: s.Last, From: beet.StatusNew, To: beet.StatusLearning, Kind: beet.FlipFirst}}, nil
			case beet.StatusDown: // events again: back to learning
				b.Status = beet.StatusLearning
				return []beet.Flip{{At: s.Last, From: beet.StatusDown, To: beet.StatusLearning, Kind: beet.FlipRecovery}}, nil
			}
			return nil, nil
		},
		ApplyDeadlines: func(b *beet.Beet, now time.Time) ([]beet.Flip, error) {
			if b.Status == beet.StatusLearning && now.Sub(at("00:00")) > 5*time.Hour && !fired {
				b.Status, fired = beet.StatusDown, true
				return []beet.Flip{{At: now, From: beet.StatusLearning, To: beet.StatusDown, Kind: beet.FlipSilence}}, nil
			}
			return nil, nil
		},
	}
	info := StreamInfo{Name: "x", Location: time.UTC, Start: at("00:00")}
	d := NewAuto(guard)(info)
	alarms, err := Replay(d, []Event{{T: at("00:00"), Count: 1}, {T: at("01:00"), Count: 1}, {T: at("09:00"), Count: 1}}, at("10:00"))
	if err != nil {
		t.Fatal(err)
	}
	if len(alarms) != 2 || alarms[0].Kind != KindSilence || alarms[0].Recovery || !alarms[1].Recovery || !d.(Armer).ArmedAt().IsZero() {
		t.Errorf("alarms %+v, armed at %s; want a silence alarm and its recovery, and not armed", alarms, d.(Armer).ArmedAt())
	}

	f := family(t, "cron-hourly")
	s, err := f.CleanStream(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	d = NewAuto(LiveEngine)(s.Info)
	alarms, err = Replay(d, s.Events, s.End)
	if err != nil {
		t.Fatal(err)
	}
	armed := d.(Armer).ArmedAt()
	i := 0
	for i < len(s.Events) && s.Events[i].T.Before(armed) {
		i++
	}
	if armed.IsZero() || i == len(s.Events) || !s.Events[i].T.Equal(armed) {
		t.Fatalf("armed at %s, not at an event", armed)
	}
	for _, a := range alarms {
		if !a.Recovery && a.At.Before(armed) {
			t.Errorf("an alarm while learning on a clean hourly job: %+v", a)
		}
	}
}
