package detect

import (
	"testing"
	"time"

	"github.com/beethq/beet"
)

// BenchmarkOnEventsAuto is the per-event cost of auto mode: decode the
// model, learn, find the silence deadline, encode the model.
//
//	go test -run '^$' -bench . -benchmem ./internal/detect
func BenchmarkOnEventsAuto(b *testing.B) {
	bt := &beet.Beet{Status: beet.StatusUp, Timezone: "Europe/Riga", Detection: beet.Detection{Mode: beet.ModeAuto}}
	t := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10 * 24 * 20 { // ten days at 20 an hour: armed
		d, _ := OnEvents(bt, t.Add(time.Duration(i)*3*time.Minute), 1, nil)
		bt.Model = d.Model
	}
	t = t.Add(10 * 24 * time.Hour)
	b.ReportAllocs()
	for b.Loop() {
		t = t.Add(3 * time.Minute)
		d, _ := OnEvents(bt, t, 1, nil)
		bt.Model = d.Model
	}
}

// BenchmarkSilenceDeadline is the deadline computation alone.
func BenchmarkSilenceDeadline(b *testing.B) {
	m := NewRateModel(time.UTC)
	t := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10 * 24 * 5 {
		m.Observe(t.Add(time.Duration(i)*12*time.Minute), 1)
	}
	for b.Loop() {
		m.SilenceDeadline()
	}
}
