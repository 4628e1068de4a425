package detect_test

import (
	"testing"
	"time"

	"github.com/beethq/beet/internal/detectjudge"
)

// TestYoungHourNoSurge replays a stream of the judge's negbin-50 family
// (seed 4, in neither split; negative-binomial hours of size 1 to 10) that
// raised a false surge on Saturday Mar 14 at 10:17, a weekend hour of the
// week seen about three times since the first event: its learned rate was
// a few hours of heavy-tailed traffic, no firm baseline for one busy hour.
// A bucket's surge evidence now counts seen/Params.SurgeYoung until it has
// been seen that often; the stream's surge incident (Mar 30) is after it.
func TestYoungHourNoSurge(t *testing.T) {
	s, alarms := replayJudgeStream(t, 4, "negbin-50/surge x3-5 3h/7")
	day := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	for _, a := range alarms {
		if !a.Recovery && !a.At.Before(day) && a.At.Before(day.Add(24*time.Hour)) {
			t.Errorf("%s alarm at %s", a.Kind, a.At.In(s.Info.Location).Format(time.RFC3339))
		}
	}
}

// replayJudgeStream regenerates the judge's stream name of seed and
// replays it through auto mode as the live service runs it.
func replayJudgeStream(t *testing.T, seed uint64, name string) (detectjudge.Stream, []detectjudge.Alarm) {
	t.Helper()
	s, err := detectjudge.StreamByName(seed, name)
	if err != nil {
		t.Fatal(err)
	}
	alarms, err := detectjudge.Replay(detectjudge.NewAuto(detectjudge.LiveEngine)(s.Info), s.Events, s.End)
	if err != nil {
		t.Fatal(err)
	}
	return s, alarms
}
