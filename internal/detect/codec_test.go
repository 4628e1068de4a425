package detect

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var updateModels = flag.Bool("update-models", false, "rewrite testdata/models from the current code")

// goldenModels are beets whose models are stored under testdata/models,
// one per watch and state worth storing: each gives the beet's zone and
// the events replayed through OnEvents and OnDeadline to build its model.
var goldenModels = map[string]func(t *testing.T) (zone string, events []time.Time){
	"rate-riga": func(t *testing.T) (string, []time.Time) {
		return "Europe/Riga", poissonTimes(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), 20, 20*24*10)
	},
	"bursty": func(t *testing.T) (string, []time.Time) {
		return "UTC", burstyEvents(rand.New(rand.NewPCG(3, 4)), time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC), 3, 20)
	},
	"young-hourly": func(t *testing.T) (string, []time.Time) {
		return "UTC", hourlyRuns(rand.New(rand.NewPCG(5, 6)), time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), 6, 5, nil)
	},
	// Cut inside the retry loop: the schedule suspended, a surge open.
	"hourly-retry-loop": dumped("testdata/hourly-retry-loop.csv", time.Hour),
	"startend-daily":    dumped("testdata/startend-daily-late-run.csv", 0),
	"monthly":           dumped("testdata/monthly-missed-run.csv", 0),
	"workhours-sydney":  dumped("testdata/workhours-late-run-sydney.csv", 0),
}

// dumped replays a judge's dump; with cut > 0, only up to cut into its
// incident.
func dumped(path string, cut time.Duration) func(t *testing.T) (string, []time.Time) {
	return func(t *testing.T) (string, []time.Time) {
		s := readDump(t, path)
		events := s.events
		for i, at := range events {
			if cut > 0 && at.After(s.start.Add(cut)) {
				events = events[:i]
				break
			}
		}
		return s.zone, events
	}
}

// observed is what a model says, independent of how it holds its state.
func observed(m *RateModel, last time.Time) string {
	var w strings.Builder
	for _, drop := range []bool{false, true} {
		due, kind, ok := m.Deadline(drop)
		fmt.Fprintf(&w, "deadline(drop=%v): %s %s %v\n", drop, due.UTC().Format(time.RFC3339Nano), kind, ok)
	}
	at, ok := m.ArmedAt()
	fmt.Fprintf(&w, "armed: %v at %s %v\nscheduled: %v\n", m.Armed(), at.UTC().Format(time.RFC3339), ok, m.Scheduled())
	fmt.Fprintf(&w, "describe: %s\n", m.Describe(last))
	return w.String()
}

// TestStoredModelsCompatible: models the current encoding wrote (under
// testdata/models) decode to the state they were written from and encode
// again to the same bytes, and replaying the same events today writes the
// same bytes: beets' stored models keep loading as they were.
func TestStoredModelsCompatible(t *testing.T) {
	for name, build := range goldenModels {
		t.Run(name, func(t *testing.T) {
			zone, events := build(t)
			a := newAutoBeet(zone)
			for _, at := range events {
				a.event(t, at, 1)
			}
			last := events[len(events)-1]
			loc, err := time.LoadLocation(zone)
			if err != nil {
				t.Fatal(err)
			}
			replayed, err := LoadRateModel(a.b.Model, loc)
			if err != nil {
				t.Fatal(err)
			}
			binPath := filepath.Join("testdata", "models", name+".hex")
			txtPath := filepath.Join("testdata", "models", name+".txt")
			if *updateModels {
				if err := errors.Join(os.MkdirAll(filepath.Dir(binPath), 0o755),
					os.WriteFile(binPath, []byte(hex.EncodeToString(a.b.Model)+"\n"), 0o644),
					os.WriteFile(txtPath, []byte(observed(replayed, last)), 0o644)); err != nil {
					t.Fatal(err)
				}
			}
			h, err := os.ReadFile(binPath)
			if err != nil {
				t.Fatal(err)
			}
			golden, err := hex.DecodeString(strings.TrimSpace(string(h)))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(txtPath)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.b.Model, golden) {
				t.Errorf("replayed model encodes differently:\n got %x\nwant %x", a.b.Model, golden)
			}
			m, err := LoadRateModel(golden, loc)
			if err != nil {
				t.Fatal(err)
			}
			if got := observed(m, last); got != string(want) {
				t.Errorf("stored model decodes to:\n%s\nwant:\n%s", got, want)
			}
			again, _ := m.MarshalBinary()
			if !bytes.Equal(again, golden) {
				t.Errorf("stored model re-encodes differently:\n got %x\nwant %x", again, golden)
			}
		})
	}
}

// TestFlagBitsDistinct: the watches' flags, declared each next to its
// watch, share the stored flags byte without overlapping.
func TestFlagBitsDistinct(t *testing.T) {
	var seen uint8
	for _, f := range []uint8{flagFrozen, flagSurge, flagHoldDisp, flagSuspended, flagResumed, flagPaired, flagCalm, flagYoung} {
		if seen&f != 0 {
			t.Fatalf("flag %#x overlaps another", f)
		}
		seen |= f
	}
}

// readModels reads the stored models under dir, by name.
func readModels(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for name := range goldenModels {
		h, err := os.ReadFile(filepath.Join("testdata", dir, name+".hex"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := hex.DecodeString(strings.TrimSpace(string(h)))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b
	}
	return out
}

// TestVersion3ModelsLoad: a model stored before the clock-change evidence
// (version 3: version 4 without its last two bytes) loads as the same
// state with no evidence, and is stored again in the current version.
func TestVersion3ModelsLoad(t *testing.T) {
	for name, v4 := range readModels(t, "models-v4") {
		v3 := append([]byte{3}, v4[1:v3Len]...)
		m, err := LoadRateModel(v3, time.UTC)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, _ := m.MarshalBinary()
		noEvidence := append(append([]byte{4}, v4[1:v3Len]...), 0, 0)
		m4, err := LoadRateModel(noEvidence, time.UTC)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, _ := m4.MarshalBinary()
		if len(got) != encodedModelLen || got[0] != modelVersion || !bytes.Equal(got, want) {
			t.Errorf("%s: version 3 re-encodes as\n%x\nwant\n%x", name, got, want)
		}
	}
}

// TestVersion4ModelsLoad: models stored in version 4 (testdata/models-v4,
// CUSUMs over whole hours) load with their rates, dispersion, schedule and
// CUSUM values, say the same in words, and are stored again in the
// current version, which loads to the same state.
func TestVersion4ModelsLoad(t *testing.T) {
	for name, v4 := range readModels(t, "models-v4") {
		if len(v4) != v4Len || v4[0] != 4 {
			t.Fatalf("%s: %d bytes of version %d, want %d of version 4", name, len(v4), v4[0], v4Len)
		}
		m, err := LoadRateModel(v4, time.UTC)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(v4[1:97], encodeRates(m)) || m.disp != math.Float32frombits(binary.LittleEndian.Uint32(v4[97:])) ||
			m.up.s != math.Float32frombits(binary.LittleEndian.Uint32(v4[136:])) || m.dn.s != math.Float32frombits(binary.LittleEndian.Uint32(v4[146:])) {
			t.Errorf("%s: version 4 state not read back", name)
		}
		if m.winCount() != 0 {
			t.Errorf("%s: the open window holds %v events; version 4 knew of none in it", name, m.winCount())
		}
		b, _ := m.MarshalBinary()
		if len(b) != encodedModelLen || b[0] != modelVersion {
			t.Fatalf("%s: stored again as %d bytes of version %d", name, len(b), b[0])
		}
		again, err := LoadRateModel(b, time.UTC)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		last := time.UnixMicro(m.last)
		if got, want := observed(again, last), observed(m, last); got != want {
			t.Errorf("%s: stored again, decodes to\n%s\nwant\n%s", name, got, want)
		}
	}
}

// encodeRates is a model's rates as stored.
func encodeRates(m *RateModel) []byte {
	var b []byte
	for _, q := range m.q {
		b = binary.LittleEndian.AppendUint16(b, q)
	}
	return b
}

// TestVersion5ModelsLoad: models stored in version 5 (testdata/models-v5,
// before the open window's bursts and the day's level) load with all they
// hold, the open window's events taken as bursts of B (at least one if
// any), today's level at 1 and the levels' CV at its prior; they say what
// they said then (the .txt beside each), and are stored again in the
// current version (version 5's bytes, the bursts, the level, the taught
// weight), which loads to the same state.
func TestVersion5ModelsLoad(t *testing.T) {
	checkOldModels(t, "models-v5", 5, v5Len, func(name string, v5 []byte, m *RateModel) []byte {
		if m.level != 1 || m.levelCV != quantCV(levelPriorCV) {
			t.Errorf("%s: level %v, CV %v; want 1 and the prior", name, m.level, m.levelCV)
		}
		if want := v5Bursts(m.winCount(), m.burst); m.winBursts != want || m.winCount() > 0 && want == 0 {
			t.Errorf("%s: %d bursts in an open window of %v events (B %.1f)", name, m.winBursts, m.winCount(), m.burst)
		}
		lv := encLevel(1, quantCV(levelPriorCV))
		b := append(append(append([]byte{modelVersion}, v5[1:128]...), v5[129:]...), m.winBursts)
		return gapsInSeconds(burstySign(append(append(b, lv[:]...), encTaught(m.taught)), m))
	})
}

// TestVersion6ModelsLoad: models stored in version 6 (testdata/models-v6:
// the last event in 8 bytes, no taught weight) load with all they hold,
// today's hours before the open one taken as having taught its level, as
// version 6 read them (dayWeight); they say what they said then (the .txt
// beside each), and are stored again in the current version (the last
// event in 7 bytes, the taught weight after the level), which loads to
// the same state.
func TestVersion6ModelsLoad(t *testing.T) {
	checkOldModels(t, "models-v6", 6, v6Len, func(name string, v6 []byte, m *RateModel) []byte {
		if v6[128] != 0 {
			t.Errorf("%s: the last event's eighth byte is %#x", name, v6[128])
		}
		return gapsInSeconds(burstySign(append(append(append([]byte{modelVersion}, v6[1:128]...), v6[129:]...), encTaught(m.taught)), m))
	})
}

// TestVersion7ModelsLoad: models stored in version 7 (testdata/models-v7:
// version 8's layout, bursty not stored) load as bursty where B is at
// bursty's bound, as version 7 read them; they say what they said then,
// and are stored again in the current version (its burst unit negative
// while bursty).
func TestVersion7ModelsLoad(t *testing.T) {
	checkOldModels(t, "models-v7", 7, encodedModelLen, func(name string, v7 []byte, m *RateModel) []byte {
		if want := name == "bursty"; m.bursty() != want {
			t.Errorf("%s: bursty %v, want %v (B %.1f)", name, m.bursty(), want, m.burst)
		}
		return gapsInSeconds(burstySign(append([]byte{modelVersion}, v7[1:]...), m))
	})
}

// TestVersion8ModelsLoad: models stored in version 8 (testdata/models-v8:
// version 9's layout, the second largest lateness not kept) load with
// their largest lateness as the second largest, so an outlier's grace
// stays a quarter period; they say what they said then, and are stored
// again in the current version.
func TestVersion8ModelsLoad(t *testing.T) {
	checkOldModels(t, "models-v8", 8, encodedModelLen, func(name string, v8 []byte, m *RateModel) []byte {
		return gapsInSeconds(append([]byte{modelVersion}, v8[1:]...))
	})
}

// TestVersion9ModelsLoad: models stored in version 9 (testdata/models-v9:
// version 10's layout, the period in bits 0-23) load with no evidence of
// skipped runs; they say what they said then, and are stored again in
// the current version.
func TestVersion9ModelsLoad(t *testing.T) {
	checkOldModels(t, "models-v9", 9, encodedModelLen, func(name string, v9 []byte, m *RateModel) []byte {
		if m.skipN != 0 {
			t.Errorf("%s: evidence of skipped runs %d, want none", name, m.skipN)
		}
		return gapsInSeconds(append([]byte{modelVersion}, v9[1:]...))
	})
}

// TestVersion10ModelsLoad: models stored in version 10 (testdata/models-v10:
// version 11's layout, the fallback's gaps in whole minutes) load with the
// same gaps, kept in seconds; they say what they said then, and are stored
// again in the current version.
func TestVersion10ModelsLoad(t *testing.T) {
	checkOldModels(t, "models-v10", 10, encodedModelLen, func(name string, v10 []byte, m *RateModel) []byte {
		for i, g := range m.gapMax {
			// To the minute (from 9 h 6 min on, to 2 min, rounded up).
			want := time.Duration(binary.LittleEndian.Uint16(v10[gapsAt+2*i:])) * time.Minute
			if got := decGap(g); got < want || got > want+time.Minute || got > gapFine*time.Second && got%(2*time.Minute) != 0 {
				t.Errorf("%s: gap %d reads as %v, want %v", name, i, got, want)
			}
		}
		return gapsInSeconds(append([]byte{modelVersion}, v10[1:]...))
	})
}

// gapsAt and gapWeekAt are the offsets of the fallback's gaps and their
// week in an encoded model.
const (
	gapsAt    = 184
	gapWeekAt = 190
)

// TestVersion11ModelsLoad: models stored in version 11 (testdata/models-v11:
// version 12's layout, the gaps' week mod 256) load with the same week and
// no outage held; they say what they said then, and are stored again in
// the current version.
func TestVersion11ModelsLoad(t *testing.T) {
	checkOldModels(t, "models-v11", 11, encodedModelLen, func(name string, v11 []byte, m *RateModel) []byte {
		if m.outageHeld {
			t.Errorf("%s: outage held, want none", name)
		}
		return append([]byte{modelVersion}, v11[1:]...)
	})
}

// gapsInSeconds rewrites the fallback's gaps in an encoded model b from
// whole minutes (versions 10 and older) to encGap's, as loading does.
func gapsInSeconds(b []byte) []byte {
	for i := range fallbackWeeks {
		at := gapsAt + 2*i
		binary.LittleEndian.PutUint16(b[at:], encGap(int64(binary.LittleEndian.Uint16(b[at:]))*60))
	}
	return b
}

// burstySign sets the sign of the burst unit in an encoded model b
// (offset 109, little-endian f32) if m is bursty, as MarshalBinary does.
func burstySign(b []byte, m *RateModel) []byte {
	if m.bursty() {
		b[112] |= 0x80
	}
	return b
}

// checkOldModels loads the models of version v stored under testdata/dir
// (n bytes each) and checks that each says what it said then (the .txt
// beside it), is stored again as stored returns (which checks the loaded
// model besides), and loads from that to the same state.
func checkOldModels(t *testing.T, dir string, v byte, n int, stored func(name string, old []byte, m *RateModel) []byte) {
	t.Helper()
	for name, old := range readModels(t, dir) {
		if len(old) != n || old[0] != v {
			t.Fatalf("%s: %d bytes of version %d, want %d of version %d", name, len(old), old[0], n, v)
		}
		zone, events := goldenModels[name](t)
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		m, err := LoadRateModel(old, loc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := os.ReadFile(filepath.Join("testdata", dir, name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		if got := observed(m, events[len(events)-1]); got != string(want) {
			t.Errorf("%s: version %d model decodes to:\n%s\nwant:\n%s", name, v, got, want)
		}
		if v < 9 && m.lateSecond() != int64(m.lateMax) {
			t.Errorf("%s: second largest lateness %d, want the largest, %d", name, m.lateSecond(), m.lateMax)
		}
		b, _ := m.MarshalBinary()
		wantB := stored(name, old, m)
		wantB[gapWeekAt] &= gapWeeks // Unix weeks mod 256 before version 12
		if v < 9 {
			wantB[164] = lateCode(int64(m.lateMax)) // the period's top byte (lateNext)
		}
		if !bytes.Equal(b, wantB) {
			t.Errorf("%s: stored again as\n%x\nwant\n%x", name, b, wantB)
		}
		again, err := LoadRateModel(b, loc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		last := time.UnixMicro(m.last)
		if got, want := observed(again, last), observed(m, last); got != want || again.winBursts != m.winBursts || again.taught != m.taught {
			t.Errorf("%s: stored again, decodes to\n%s\nwant\n%s", name, got, want)
		}
	}
}

// TestLateCodeRoundsUp: the second largest lateness, stored in a byte, is
// never less than the lateness seen, and at most a step (4.5%) more.
func TestLateCodeRoundsUp(t *testing.T) {
	for l := int64(0); l <= int64(lateSteps[len(lateSteps)-1]); l += 1 + l/300 {
		got := lateSteps[lateCode(l)]
		if got < l || got > l+1+l*45/1000 {
			t.Fatalf("lateness %d s stored as %d s", l, got)
		}
	}
}

// TestGapsKeptToTheSecond: the fallback keeps a gap to the second up to
// 9 h 6 min, to 2 min above (rounded up: a limit built on it never errs
// early), up to a monthly job's 45 days; a larger gap keeps a larger value.
func TestGapsKeptToTheSecond(t *testing.T) {
	prev := uint16(0)
	for _, c := range []struct{ gap, kept time.Duration }{
		{0, 0},
		{79 * time.Second, 79 * time.Second},
		{gapFine * time.Second, gapFine * time.Second},
		{gapFine*time.Second + time.Second, gapFine*time.Second + 2*time.Minute},
		{23*time.Hour + 53*time.Minute, 23*time.Hour + 54*time.Minute},
		{31 * 24 * time.Hour, 31 * 24 * time.Hour},
		{400 * 24 * time.Hour, decGap(math.MaxUint16)},
	} {
		v := encGap(int64(c.gap / time.Second))
		if got := decGap(v); got != c.kept || v < prev {
			t.Errorf("a gap of %v is kept as %v (%d), want %v, more than the gap before", c.gap, got, v, c.kept)
		}
		prev = v
	}
	if most := decGap(math.MaxUint16); most < 45*24*time.Hour {
		t.Errorf("the longest gap kept is %v, want 45 days at least", most)
	}
}
