package detect_test

import (
	"os"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
	"github.com/beethq/beet/internal/detectjudge"
)

func TestDbgStream(t *testing.T) {
	name := os.Getenv("DBG_STREAM")
	if name == "" {
		t.Skip()
	}
	s, err := detectjudge.StreamByName(1, name)
	if err != nil {
		t.Fatal(err)
	}
	b := beet.Beet{ID: 1, Status: beet.StatusNew, Timezone: s.Info.Location.String(), Detection: beet.Detection{Mode: beet.ModeAuto}}
	n := 0
	for i, e := range s.Events {
		fl, err := detect.ApplyDeadlines(&b, e.T)
		if err != nil {
			t.Fatal(err)
		}
		fl2, err := detect.ApplyEvents(&b, beet.EventSpan{First: e.T, Last: e.T, Count: e.Count})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range append(fl, fl2...) {
			n++
			if n < 12 {
				w, _ := detect.Watch(&b)
				t.Logf("ev %d %s %s→%s %s: %s | %s %s", i, f.At.In(s.Info.Location).Format(time.RFC3339), f.From, f.To, f.Kind, f.Reason, w.Model, w.Description)
			}
		}
		if i < 8 {
			t.Logf("event %d at %s count %d", i, e.T.In(s.Info.Location).Format(time.RFC3339), e.Count)
		}
	}
}
