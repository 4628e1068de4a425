package detect

import (
	"encoding/binary"
	"errors"
	"math"
	"time"
)

// modelVersion leads the encoded model, so a later layout can read (or
// reset) an older one.
const modelVersion = 1

// encodedModelLen is the size of an encoded RateModel: the state a beet
// keeps in the database.
const encodedModelLen = 1 + 48*4 + 48*2 + 4 + 8 + 4 + 8 + 8 + 4 + 1

// MarshalBinary encodes the model's state (not its location, which comes
// from the beet).
func (m *RateModel) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, encodedModelLen)
	b = append(b, modelVersion)
	for _, r := range m.rate {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(r))
	}
	for _, n := range m.seen {
		b = binary.LittleEndian.AppendUint16(b, n)
	}
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(m.disp))
	b = binary.LittleEndian.AppendUint64(b, uint64(m.hourStart))
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(m.hourCount))
	b = binary.LittleEndian.AppendUint64(b, uint64(m.first))
	b = binary.LittleEndian.AppendUint64(b, uint64(m.last))
	b = binary.LittleEndian.AppendUint32(b, uint32(m.clusters))
	if m.frozen {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	return b, nil
}

var errModel = errors.New("rate model: unknown encoding")

// LoadRateModel decodes a model for a beet in loc; an empty b is a new model.
func LoadRateModel(b []byte, loc *time.Location) (*RateModel, error) {
	m := NewRateModel(loc)
	if len(b) == 0 {
		return m, nil
	}
	if len(b) != encodedModelLen || b[0] != modelVersion {
		return nil, errModel
	}
	b = b[1:]
	for i := range m.rate {
		m.rate[i] = math.Float32frombits(binary.LittleEndian.Uint32(b))
		b = b[4:]
	}
	for i := range m.seen {
		m.seen[i] = binary.LittleEndian.Uint16(b)
		b = b[2:]
	}
	m.disp = math.Float32frombits(binary.LittleEndian.Uint32(b))
	m.hourStart = int64(binary.LittleEndian.Uint64(b[4:]))
	m.hourCount = math.Float32frombits(binary.LittleEndian.Uint32(b[12:]))
	m.first = int64(binary.LittleEndian.Uint64(b[16:]))
	m.last = int64(binary.LittleEndian.Uint64(b[24:]))
	m.clusters = int32(binary.LittleEndian.Uint32(b[32:]))
	m.frozen = b[36] == 1
	return m, nil
}
