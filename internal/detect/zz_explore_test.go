package detect

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestExploreTTD(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, rate := range []float64{20, 50, 200} {
		for _, f := range []float64{0.3, 3, 5} {
			for seed := range uint64(4) {
				r := rand.New(rand.NewPCG(seed+1, 77))
				a := newAutoBeet("UTC")
				h := t0
				for ; h.Before(t0.Add(21 * 24 * time.Hour)); h = h.Add(time.Hour) {
					a.hourOfEvents(t, r, h, poissonCount(r, rate))
				}
				m, _ := LoadRateModel(a.b.Model, time.UTC)
				start := h.Add(17 * time.Minute)
				// finish current hour normally up to start
				tt := h
				for {
					tt = tt.Add(time.Duration(r.ExpFloat64() / rate * float64(time.Hour)))
					if tt.After(start) {
						break
					}
					a.event(t, tt, 1)
				}
				tt = start
				end := start.Add(12 * time.Hour)
				for tt.Before(end) {
					tt = tt.Add(time.Duration(r.ExpFloat64() / (rate * f) * float64(time.Hour)))
					a.event(t, tt, 1)
					if len(alarms(a.since(start))) > 0 {
						break
					}
				}
				a.until(t, end)
				fl := alarms(a.since(start))
				ttd := "none"
				reason := ""
				if len(fl) > 0 {
					ttd = fl[0].At.Sub(start).Round(time.Second).String()
					reason = fl[0].Reason
				}
				t.Logf("rate %v f %v seed %d: r=%.0f disp=%.2f ttd %s %s", rate, f, seed, m.size(), m.disp, ttd, reason)
			}
		}
	}
}
