package detect

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// burstyChangeFlagged feeds n beets of bursts (1-20 events 5 s apart) at
// 3 an hour for three weeks, then the bursts' rate times factor for hours,
// and returns how many were flagged with kind within them and the mean
// time it took.
func burstyChangeFlagged(t *testing.T, n int, factor float64, hours int, kind beet.FlipKind) (int, time.Duration) {
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	found, took := 0, time.Duration(0)
	for seed := range uint64(n) {
		r := rand.New(rand.NewPCG(seed+1, 28))
		a := newAutoBeet("UTC")
		for _, at := range burstyEvents(r, start, 3, 21) {
			a.event(t, at, 1)
		}
		from := start.AddDate(0, 0, 21)
		for _, at := range burstyEvents(r, from, 3*factor, 1) {
			if at.Before(from.Add(time.Duration(hours) * time.Hour)) {
				a.event(t, at, 1)
			}
		}
		a.until(t, from.Add(time.Duration(hours)*time.Hour))
		for _, f := range a.since(from) {
			if f.Kind == kind {
				found++
				took += f.At.Sub(from)
				break
			}
		}
	}
	if found == 0 {
		return 0, 0
	}
	return found, took / time.Duration(found)
}

func TestBurstyDropDiag(t *testing.T) {
	f, took := burstyChangeFlagged(t, 12, 0.3, 12, beet.FlipDrop)
	t.Logf("drops: %d of 12, mean %v", f, took)
	f, took = burstyChangeFlagged(t, 12, 4, 3, beet.FlipSurge)
	t.Logf("surges: %d of 12, mean %v", f, took)
}

func TestBurstyDropDiagOff(t *testing.T) {
	burstCountsOff = true
	defer func() { burstCountsOff = false }()
	TestBurstyDropDiag(t)
}

func TestBurstyDiagState(t *testing.T) {
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	r := rand.New(rand.NewPCG(1, 28))
	a := newAutoBeet("UTC")
	for _, at := range burstyEvents(r, start, 3, 21) {
		a.event(t, at, 1)
	}
	m, _ := LoadRateModel(a.b.Model, time.UTC)
	t.Logf("B %.2f disp %.2f size %.2f callGap %.1f winN %d bursty %v rate[12] %.1f cusumSize %.1f unit %.1f", m.burst, m.disp, m.size(), m.callGap, m.windows(m.hourStart), m.bursty(), m.rate[12], m.dropSize(m.size(), float64(m.rate[12]/m.burst)), m.unit())
}

func TestBurstySurgeTrace(t *testing.T) {
	for _, off := range []bool{false, true} {
		burstCountsOff = off
		start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
		r := rand.New(rand.NewPCG(2, 28))
		a := newAutoBeet("UTC")
		for _, at := range burstyEvents(r, start, 3, 21) {
			a.event(t, at, 1)
		}
		from := start.AddDate(0, 0, 21)
		for _, at := range burstyEvents(r, from, 12, 1) {
			if at.Before(from.Add(3 * time.Hour)) {
				a.event(t, at, 1)
				m, _ := LoadRateModel(a.b.Model, time.UTC)
				t.Logf("off %v %s up %.2f partial %.2f winBursts %d winCount %.0f hourCount %.0f B %.1f size %.2f rate %.1f", off, at.Format("15:04:05"), m.up.s, m.partial(3), m.winBursts, m.winCount(), m.hourCount, m.burst, m.size(), m.rate[m.bucket(at.Unix())])
			}
		}
		a.until(t, from.Add(3*time.Hour))
		t.Logf("%+v", alarms(a.since(from)))
	}
	burstCountsOff = false
}

func TestSlowDiag(t *testing.T) {
	for _, kl := range []float64{0, 10} {
		old := defaultParams
		defaultParams.SlowRate = kl
		f, took := sparseDropFlagged(t, 2, 24)
		t.Logf("kl %v: 2/h %d of 24, %v", kl, f, took)
		f, took = sparseDropFlagged(t, 4, 24)
		t.Logf("kl %v: 4/h %d of 24, %v", kl, f, took)
		defaultParams = old
	}
}
