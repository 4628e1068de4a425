package detect

import (
	"encoding/binary"
	"errors"
	"math"
	"sync"
	"time"
)

// modelVersion leads the encoded model, so a later layout can read (or
// reset) an older one. Version 1 (326 bytes: float32 cluster rates) is not
// read: a beet with one starts learning again at its next event.
const modelVersion = 2

// encodedModelLen is the size of an encoded RateModel: the state a beet
// keeps in the database.
const encodedModelLen = 1 + 48*2 + 4*4 + 4 + 4 + 4 + 8 + 4 + 1 + 2*16 + 4 + 2 + 2 + 4 + 4 + 1 + 2 + 2

// Rates are stored as 16-bit logarithms: 2^(q/1024 − 24) events an hour,
// from 6e-8 to 1e12 in steps of 0.07%; 0 is a bucket never seen.
const (
	rateScale  = 1024
	rateOffset = 24
)

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

// MarshalBinary encodes the model's state (not its location, which comes
// from the beet).
func (m *RateModel) MarshalBinary() ([]byte, error) {
	le := binary.LittleEndian
	b := make([]byte, 0, encodedModelLen)
	b = append(b, modelVersion)
	for _, q := range m.q {
		b = le.AppendUint16(b, q)
	}
	b = le.AppendUint32(b, math.Float32bits(m.disp))
	b = le.AppendUint32(b, math.Float32bits(m.nbNum))
	b = le.AppendUint32(b, math.Float32bits(m.nbDen))
	b = le.AppendUint32(b, math.Float32bits(m.burst))
	b = le.AppendUint32(b, uint32(m.hourStart/3600))
	b = le.AppendUint32(b, math.Float32bits(m.hourCount))
	b = le.AppendUint32(b, uint32(m.first))
	b = le.AppendUint64(b, uint64(m.last))
	b = le.AppendUint32(b, m.events)
	b = append(b, m.flags)
	for _, c := range []cusum{m.up, m.dn} {
		b = le.AppendUint32(b, math.Float32bits(c.s))
		b = le.AppendUint32(b, c.start)
		b = le.AppendUint32(b, math.Float32bits(c.obs))
		b = le.AppendUint32(b, math.Float32bits(c.exp))
	}
	b = le.AppendUint32(b, uint32(m.cluster))
	b = le.AppendUint16(b, m.clusterN)
	b = le.AppendUint16(b, m.calls)
	b = le.AppendUint32(b, math.Float32bits(m.callGap))
	b = le.AppendUint32(b, m.period)
	b = append(b, m.streak)
	b = le.AppendUint16(b, m.devMean)
	b = le.AppendUint16(b, m.devMax)
	return b, nil
}

var errModel = errors.New("rate model: unknown encoding")

// LoadRateModel decodes a model for a beet in loc; an empty b is a new
// model. An older or damaged encoding is an error: the caller starts over.
func LoadRateModel(b []byte, loc *time.Location) (*RateModel, error) {
	m := NewRateModel(loc)
	if len(b) == 0 {
		return m, nil
	}
	if len(b) != encodedModelLen || b[0] != modelVersion {
		return nil, errModel
	}
	le := binary.LittleEndian
	b = b[1:]
	for i := range m.rate {
		m.q[i] = le.Uint16(b)
		m.rate[i] = decodeRate(m.q[i])
		b = b[2:]
	}
	m.disp = math.Float32frombits(le.Uint32(b))
	m.nbNum = math.Float32frombits(le.Uint32(b[4:]))
	m.nbDen = math.Float32frombits(le.Uint32(b[8:]))
	m.burst = math.Float32frombits(le.Uint32(b[12:]))
	b = b[12:]
	m.hourStart = int64(le.Uint32(b[4:])) * 3600
	m.hourCount = math.Float32frombits(le.Uint32(b[8:]))
	m.first = int64(le.Uint32(b[12:]))
	m.last = int64(le.Uint64(b[16:]))
	m.events = le.Uint32(b[24:])
	m.flags = b[28]
	b = b[29:]
	for _, c := range []*cusum{&m.up, &m.dn} {
		c.s = math.Float32frombits(le.Uint32(b))
		c.start = le.Uint32(b[4:])
		c.obs = math.Float32frombits(le.Uint32(b[8:]))
		c.exp = math.Float32frombits(le.Uint32(b[12:]))
		b = b[16:]
	}
	m.cluster = int64(le.Uint32(b))
	m.clusterN = le.Uint16(b[4:])
	m.calls = le.Uint16(b[6:])
	m.callGap = math.Float32frombits(le.Uint32(b[8:]))
	m.period = le.Uint32(b[12:])
	m.streak = b[16]
	m.devMean = le.Uint16(b[17:])
	m.devMax = le.Uint16(b[19:])
	if !(m.disp >= 1 && m.disp <= maxDisp) || !(m.nbDen > 0) || !(m.burst >= 1) {
		return nil, errModel // NaN or out of range: not a model this code wrote
	}
	return m, nil
}
