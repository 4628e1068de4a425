package detect

import (
	"encoding/binary"
	"errors"
	"math"
	"sync"
	"time"
)

// modelVersion leads the encoded model, so a later layout can read (or
// reset) an older one. Version 2 (191 bytes, before the calendar
// schedule and the fallback) is read and converted (loadV2); version 3
// (196 bytes, before the clock-change evidence) and version 4 (198 bytes,
// CUSUMs over hours) are read as 5, with no clock-change evidence (3) and
// the open hour's events all before the open window; version 5 (196
// bytes, before the open window's bursts and the day's level) is read as
// 6 with the open window's events as bursts of the burst unit, today's
// level at 1 and the levels' CV at its prior; version 6 (200 bytes, Unix
// µs of the last event in 8 bytes, not the taught weight) is read as 7,
// the hours of today before the open one taken as having taught its
// level (dayWeight, as version 6 counted them); version 7 (the layout of
// 8, its burst unit never negative) is read as 8 with the beet bursty if
// B is at bursty's bound; version 8 (the layout of 9, the period's top
// byte 0) is read as 9 with the largest lateness as the second largest;
// version 9 (the layout of 10, the period in bits 0-23) is read as 10 with
// no evidence of skipped runs; version 10 (the layout of 11, gaps in whole
// minutes) is read as 11 with its gaps in seconds (encGap); version 11
// (the layout of 12, the gaps' week mod 256) is read as 12 with no outage
// held; version 1 (326 bytes) is not: a beet with one starts learning
// again at its next event.
const modelVersion = 12

// encodedModelLen is the size of an encoded RateModel: the state a beet
// keeps in the database. Version 12, little-endian, offsets in bytes:
//
//	  0  u8      version (modelVersion)
//	  1  u16×48  rateState.q: rates by bucket (encodeRate; 0: never seen)
//	 97  f32×5   rateState.disp, .nbNum, .nbDen; burstState.burst (negative
//	             while burstState.burstyOn); rateState.hourCount
//	117  u32     lifeState.first (Unix seconds)
//	121  i56     lifeState.last (Unix µs; the open hour, hourStart, and
//	             the open window, winStart, are its own)
//	128  u32     lifeState.events
//	132  u16     lifeState.armedAt
//	134  u8      lifeState.flags: bit 0 flagFrozen, 1 flagSurge, 2 flagHoldDisp
//	             (rate.go), 3 flagSuspended, 4 flagResumed, 5 flagPaired,
//	             7 flagYoung (schedule.go), 6 flagCalm (surgeend.go) while a surge
//	             is open, else flagDayLow (daylow.go)
//	135  8×2     rateState.up, then .dn: f32 s, u16 minWindows before the
//	             open window that the run (or the calm) started, plus 1
//	             (0: none; inWindow+s: s seconds into the open window), u16
//	             obs (encCount)
//	151  u32     scheduleState.cluster (Unix seconds)
//	155  u8×2    scheduleState.clusterN, .calls
//	157  f32     burstState.callGap
//	161  u32     scheduleState.period (bits 0-21), .skipN (bits 22-23),
//	             .lateNext (bits 24-31)
//	165  u8      scheduleState.streak
//	166  u16×2   scheduleState.lateMean, .lateMax
//	170  u8×2    scheduleState.daysOn, .daysMissed
//	172  u16×3   scheduleState.winLo, .winHi, .endOff
//	178  u8      bits 0-4 scheduleState.extraN, bits 5-7 .endRunN
//	179  u8      bits 0-1 scheduleState.pair, bits 2-7 burstState.dispHourN
//	180  u16     scheduleState.calDay
//	182  i16     scheduleState.shiftDay (under a day: a pending step)
//	184  u16×3   fallbackState.gapMax (encGap)
//	190  u8      fallbackState.gapWeek (bits 0-6), .outageHeld (bit 7)
//	191  i8×2    zoneState.shiftEv
//	193  u16     rateState.winN (bits 14-15, encWindow) and .winBase (bits 0-13)
//	195  u8      rateState.winBursts
//	196  u24     levelState.level (bits 0-11, q/1024) and .levelCV (bits 12-23,
//	             q/4096) (daylevel.go, encLevel)
//	199  u8      levelState.taught (encTaught)
//	200          end
//
// Version 6 holds lifeState.last in 8 bytes (u64) and ends before
// taught; version 5 also ends before winBursts.
//
// Versions 3 and 4 hold each CUSUM in 10 bytes (the run's start in hours
// before the open hour, and u16 exp, its expected events, after obs: the
// rates say them now) and end before winBase; version 3 also before shiftEv.
const encodedModelLen = 1 + 48*2 + 4*4 + 4 + 4 + 7 + 4 + 2 + 1 + 2*8 + 4 + 1 + 1 + 4 + 4 + 1 + 2 + 2 +
	1 + 1 + 2 + 2 + 2 + 1 + 1 + 2 + 2 + 2*fallbackWeeks + 1 + 2 + 2 + 1 + 3 + 1

// v6Len is version 6: version 7 with the last event in 8 bytes, without
// the taught weight.
const v6Len = encodedModelLen + 1 - 1

// v5Len is version 5: version 6 without the open window's bursts and the
// day's level.
const v5Len = v6Len - 1 - 3

// v4Len is version 4 (see encodedModelLen).
const v4Len = v5Len + 2*2 - 2

// v3Len is version 3: version 4 without the clock-change evidence (shiftEv).
const v3Len = v4Len - 2

const v2Len = 191

// Rates are stored as 16-bit logarithms: 2^(q/1024 − 24) events an hour,
// from 6e-8 to 1e12 in steps of 0.07%; 0 is a bucket never seen.
const (
	rateScale  = 1024
	rateOffset = 24
)

// inWindow marks a CUSUM start inside the open window, seconds after its
// start: the calm after a silence that ended there (calmAfterSilence).
// Starts further back are counted in windows, below it (426 days of 10
// minutes; older ones read as that old, or, written by older code as up to
// 455 days, as in the open window: one window read in part, no more).
const inWindow = 0xF000

func encodeRate(r float32) uint16 {
	if r < 0 {
		return 0
	}
	q := math.Round((math.Log2(float64(r)) + rateOffset) * rateScale)
	return uint16(min(max(q, 1), math.MaxUint16)) // 0 events an hour reads as 6e-8
}

func decodeRate(q uint16) float32 {
	if q == 0 {
		return -1
	}
	rateTableOnce.Do(func() {
		for i := range rateTable {
			rateTable[i] = float32(math.Exp2(float64(i)/rateScale - rateOffset))
		}
	})
	return rateTable[q]
}

// rateTable decodes stored rates without an Exp2 per bucket per event.
var (
	rateTable     [1 << 16]float32
	rateTableOnce sync.Once
)

// encCount stores a CUSUM's event count as a rate is stored (0 is 0).
func encCount(x float32) uint16 {
	if x <= 0 {
		return 0
	}
	return encodeRate(x)
}

func decCount(q uint16) float32 {
	if q == 0 {
		return 0
	}
	return decodeRate(q)
}

// quantCount is x as it will be stored, so that a model behaves the same
// whether or not it was encoded in between.
func quantCount(x float32) float32 { return decCount(encCount(x)) }

// MarshalBinary encodes the model's state (not its location, which comes
// from the beet).
func (m *RateModel) MarshalBinary() ([]byte, error) {
	le := binary.LittleEndian
	b := make([]byte, 0, encodedModelLen)
	b = append(b, modelVersion)
	for _, q := range m.q {
		b = le.AppendUint16(b, q)
	}
	burst := m.burst
	if m.burstyOn {
		burst = -burst
	}
	for _, f := range []float32{m.disp, m.nbNum, m.nbDen, burst, m.hourCount} {
		b = le.AppendUint32(b, math.Float32bits(f))
	}
	b = le.AppendUint32(b, uint32(m.first))
	b = le.AppendUint64(b, uint64(m.last))
	b = b[:len(b)-1] // 7 bytes (readers sign-extend): Unix µs to the year 3111
	b = le.AppendUint32(b, m.events)
	b = le.AppendUint16(b, m.armedAt)
	b = append(b, m.flags)
	for _, c := range []cusum{m.up, m.dn} {
		b = le.AppendUint32(b, math.Float32bits(c.s))
		back := uint16(0) // windows before the open one that the run started, plus 1; 0: none
		switch at := int64(c.start); {
		case at > m.winStart && at-m.winStart < 3600:
			back = uint16(inWindow + at - m.winStart) // a calm from inside the open window (calmAfterSilence)
		case at != 0:
			back = uint16(min((m.winStart-at)/minWindow+1, inWindow-1))
		}
		b = le.AppendUint16(b, back)
		b = le.AppendUint16(b, encCount(c.obs))
	}
	b = le.AppendUint32(b, uint32(m.cluster))
	b = append(b, m.clusterN, m.calls)
	b = le.AppendUint32(b, math.Float32bits(m.callGap))
	b = le.AppendUint32(b, m.period|uint32(m.skipN)<<22|uint32(m.lateNext)<<24)
	b = append(b, m.streak)
	b = le.AppendUint16(b, m.lateMean)
	b = le.AppendUint16(b, m.lateMax)
	b = append(b, m.daysOn, m.daysMissed)
	b = le.AppendUint16(b, m.winLo)
	b = le.AppendUint16(b, m.winHi)
	b = le.AppendUint16(b, m.endOff)
	b = append(b, m.extraN|m.endRunN<<5, m.pair|m.dispHourN<<2)
	b = le.AppendUint16(b, m.calDay)
	b = le.AppendUint16(b, uint16(m.shiftDay))
	for _, g := range m.gapMax {
		b = le.AppendUint16(b, g)
	}
	week := m.gapWeek
	if m.outageHeld {
		week |= outageHeldBit
	}
	b = append(b, week)
	b = append(b, byte(m.shiftEv[0]), byte(m.shiftEv[1]))
	b = le.AppendUint16(b, encWindow(m.winN, m.winBase))
	b = append(b, m.winBursts)
	lv := encLevel(m.level, m.levelCV)
	b = append(b, lv[:]...)
	b = append(b, encTaught(m.taught))
	return b, nil
}

var errModel = errors.New("rate model: unknown encoding")

// LoadRateModel decodes a model for a beet in loc; an empty b is a new
// model. A version 2 model is converted; an older or damaged encoding is
// an error: the caller starts over.
func LoadRateModel(b []byte, loc *time.Location) (*RateModel, error) {
	return loadRateModel(b, loc, &defaultParams)
}

func loadRateModel(b []byte, loc *time.Location, p *Params) (*RateModel, error) {
	m := newRateModel(loc, p)
	if len(b) == 0 {
		return m, nil
	}
	if len(b) == v2Len && b[0] == 2 {
		return loadV2(m, b)
	}
	v3 := len(b) == v3Len && b[0] == 3                    // read as version 5 with no clock-change evidence …
	v4 := v3 || len(b) == v4Len && b[0] == 4              // … and, as version 4, CUSUMs held at the open hour's start
	v5 := v4 || len(b) == v5Len && b[0] == 5              // … and, as version 5, without the open window's bursts and the day's level …
	v6 := v5 || len(b) == v6Len && b[0] == 6              // … and, as version 6, the last event in 8 bytes and no taught weight …
	v7 := v6 || len(b) == encodedModelLen && b[0] == 7    // … and, as version 7, bursty unstored …
	v8 := v7 || len(b) == encodedModelLen && b[0] == 8    // … and, as version 8, no second largest lateness …
	v9 := v8 || len(b) == encodedModelLen && b[0] == 9    // … and, as version 9, no evidence of skipped runs …
	v10 := v9 || len(b) == encodedModelLen && b[0] == 10  // … and, as version 10, gaps in whole minutes …
	v11 := v10 || len(b) == encodedModelLen && b[0] == 11 // … and, as version 11, the gaps' week mod 256
	if !v11 && (len(b) != encodedModelLen || b[0] != modelVersion) {
		return nil, errModel
	}
	r := reader{b: b[1:]}
	for i := range m.rate {
		m.q[i] = r.u16()
		m.rate[i] = decodeRate(m.q[i])
	}
	m.disp, m.nbNum, m.nbDen, m.burst, m.hourCount = r.f32(), r.f32(), r.f32(), r.f32(), r.f32()
	if m.burst < 0 {
		m.burst, m.burstyOn = -m.burst, true
	} else if v7 {
		m.noteBursty() // as bursty read it then, from B and the rates
	}
	m.first = int64(r.u32())
	if v6 {
		m.last = int64(r.u64())
	} else {
		m.last = r.i56()
	}
	m.hourStart = m.last / 1e6 / 3600 * 3600
	m.events = r.u32()
	m.armedAt = r.u16()
	m.flags = r.u8()
	var backs [2]int64 // the runs' starts, read once the open window is
	for i, c := range []*cusum{&m.up, &m.dn} {
		c.s = r.f32()
		backs[i] = int64(r.u16())
		c.obs = decCount(r.u16())
		if v4 {
			r.u16() // the run's expected events: the rates say them now
		}
	}
	m.cluster = int64(r.u32())
	m.clusterN, m.calls = r.u8(), r.u8()
	m.callGap = r.f32()
	period := r.u32()
	m.streak = r.u8()
	m.lateMean, m.lateMax = r.u16(), r.u16()
	m.period, m.skipN, m.lateNext = period&maxPeriod, uint8(period>>22&3), uint8(period>>24)
	if v9 {
		m.period, m.skipN = min(period&(1<<24-1), maxPeriod), 0
	}
	if v8 {
		// The second largest lateness was not kept: the largest stands
		// for it (an outlier's grace is a quarter period, as it was).
		m.period, m.lateNext = min(period, maxPeriod), lateCode(int64(m.lateMax))
	}
	m.daysOn, m.daysMissed = r.u8(), r.u8()
	m.winLo, m.winHi, m.endOff = r.u16(), r.u16(), r.u16()
	extras, flags2 := r.u8(), r.u8()
	m.extraN, m.endRunN = extras&31, extras>>5
	m.pair, m.dispHourN = flags2&3, flags2>>2
	m.calDay = r.u16()
	m.shiftDay = int16(r.u16())
	for i := range m.gapMax {
		m.gapMax[i] = r.u16()
		if v10 {
			m.gapMax[i] = encGap(int64(m.gapMax[i]) * 60)
		}
	}
	week := r.u8()
	m.gapWeek, m.outageHeld = week&gapWeeks, week&outageHeldBit != 0 && !v11
	if !v3 {
		m.shiftEv = [2]int8{int8(r.u8()), int8(r.u8())}
	}
	m.winN, m.winBase = 1, quantBase(m.hourCount) // version 4: the open hour, one window, its events before it …
	if !v4 {
		m.winN, m.winBase = decWindow(r.u16()) // … which versions 5 on store
	}
	if !v5 {
		m.winBursts = r.u8()
		m.level, m.levelCV = decLevel([3]byte{r.u8(), r.u8(), r.u8()})
	}
	if !v6 {
		m.taught = decTaught(r.u8())
	}
	if m.levelOn() {
		m.levelEnd = m.dayEnd(m.hourStart) // a zone lookup or two: only for a beet that reads its level
		if v6 {
			m.taught = quantTaught(m.dayWeight(m.hourStart, m.unit(), m.size()))
		}
	}
	m.winStart = m.windowOf(m.last / 1e6)
	if v5 {
		m.winBursts = v5Bursts(m.winCount(), m.burst)
	}
	for i, c := range []*cusum{&m.up, &m.dn} {
		if back := backs[i]; back >= inWindow && back < inWindow+3600 && !v4 {
			c.start = uint32(m.winStart + back - inWindow)
		} else if back != 0 && v4 {
			c.start = uint32(m.hourStart - (back-1)*3600)
		} else if back != 0 {
			c.start = uint32(m.winStart - (back-1)*minWindow)
		}
	}
	if !(m.disp >= 1 && m.disp <= maxDisp) || !(m.nbDen > 0) || !(m.burst >= 1) || !(m.level > 0) {
		return nil, errModel // NaN or out of range: not a model this code wrote
	}
	return m, nil
}

// loadV2 converts a version 2 model: the rate model as it was; the
// schedule's mean and largest |lateness| taken as lateness (the slot was
// the runs' middle then, so the grace starts wider than needed, never
// narrower); days and window unknown (every slot expected, as before);
// and the fallback's gaps unknown, so taken as the longest it can hold
// until three weeks of real gaps have replaced them.
func loadV2(m *RateModel, b []byte) (*RateModel, error) {
	r := reader{b: b[1:]}
	for i := range m.rate {
		m.q[i] = r.u16()
		m.rate[i] = decodeRate(m.q[i])
	}
	m.disp, m.nbNum, m.nbDen, m.burst = r.f32(), r.f32(), r.f32(), r.f32()
	r.u32() // the open hour: the last event's
	m.hourCount = r.f32()
	m.first = int64(r.u32())
	m.last = int64(r.u64())
	m.hourStart = m.last / 1e6 / 3600 * 3600
	m.winStart, m.winN = m.hourStart, 1 // as version 4 did: the open hour, one window
	m.winBase = quantBase(m.hourCount)
	m.winBursts = v5Bursts(m.winCount(), m.burst)
	m.events = r.u32()
	m.flags = r.u8()
	for _, c := range []*cusum{&m.up, &m.dn} {
		c.s, c.start, c.obs = r.f32(), r.u32(), quantCount(r.f32())
		r.f32() // the run's expected events
	}
	m.cluster = int64(r.u32())
	m.clusterN, m.calls = uint8(min(r.u16(), math.MaxUint8)), uint8(min(r.u16(), math.MaxUint8))
	m.callGap = r.f32()
	m.period = min(r.u32(), maxPeriod)
	m.streak = r.u8()
	m.lateMean, m.lateMax = r.u16(), r.u16()
	m.lateNext = lateCode(int64(m.lateMax))
	if !(m.disp >= 1 && m.disp <= maxDisp) || !(m.nbDen > 0) || !(m.burst >= 1) {
		return nil, errModel
	}
	for i := range m.gapMax {
		m.gapMax[i] = math.MaxUint16
	}
	if m.period > 0 {
		m.calDay = uint16(m.cluster/86400 - 8) // a schedule it had: its days and window are as good as known (none)
	}
	m.gapWeek = uint8(m.last/1e6/week) & gapWeeks
	if m.Armed() {
		m.armedAt = uint16(min(1+(m.last/1e6-m.first)/600, math.MaxUint16)) // armed by then, at the latest
	}
	return m, nil
}

// v5Bursts is the open window's bursts of a model stored before they
// were (version 5 and older): its events in clusters of B, at least one
// if it has any.
func v5Bursts(events float64, b float32) uint8 {
	if events <= 0 {
		return 0
	}
	return uint8(min(60, max(1, math.Round(events/float64(max(1, b))))))
}

// reader reads a model's fields in order.
type reader struct{ b []byte }

func (r *reader) u8() uint8 {
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *reader) u16() uint16 {
	v := binary.LittleEndian.Uint16(r.b)
	r.b = r.b[2:]
	return v
}

func (r *reader) u32() uint32 {
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *reader) u64() uint64 {
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

// i56 reads 7 bytes, sign-extended.
func (r *reader) i56() int64 {
	var b [8]byte
	copy(b[:7], r.b)
	r.b = r.b[7:]
	return int64(binary.LittleEndian.Uint64(b[:])<<8) >> 8
}

func (r *reader) f32() float32 { return math.Float32frombits(r.u32()) }
