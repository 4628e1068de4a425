package ingest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/beethq/beet"
)

// A Spool is a local append-only file that holds events the database could
// not take. Each record is [length u32][CRC-32C u32][payload], written and
// fsync'd before the requests it holds are answered. On open, a torn record
// at the tail (a crash mid-write, never acknowledged) is cut off.
type Spool struct {
	mu      sync.Mutex
	f       *os.File
	size    int64 // bytes of whole records in the file
	maxSize int64
}

var crc32c = crc32.MakeTable(crc32.Castagnoli)

const (
	recordHeader   = 8
	maxRecordBytes = 1 << 20
	spoolVersion   = 3 // 2 added kind, exit code and message, 3 the client address; 1 and 2 are still read
)

// ErrSpoolFull is returned when the spool has reached its size limit.
var ErrSpoolFull = errors.New("spool is full")

// OpenSpool opens or creates the spool file at path, keeping the whole
// records already in it. maxSize bounds the file (0 means 1 GiB).
func OpenSpool(path string, maxSize int64) (*Spool, error) {
	if maxSize <= 0 {
		maxSize = 1 << 30
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create spool dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open spool: %w", err)
	}
	s := &Spool{f: f, maxSize: maxSize}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat spool: %w", err)
	}
	good, err := s.scan(func(beet.Event) error { return nil }, 0, info.Size())
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, fmt.Errorf("cut torn spool tail: %w", err)
	}
	s.size = good
	return s, nil
}

// Size returns the bytes of events waiting in the spool.
func (s *Spool) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.size
}

// Append writes the events as one record and fsyncs. Only when it returns
// nil are the events safe to acknowledge.
func (s *Spool) Append(items []beet.Event) error {
	payload := encodeRecord(items)
	rec := make([]byte, recordHeader, recordHeader+len(payload))
	binary.LittleEndian.PutUint32(rec[0:4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(rec[4:8], crc32.Checksum(payload, crc32c))
	rec = append(rec, payload...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.size+int64(len(rec)) > s.maxSize {
		return ErrSpoolFull
	}
	if _, err := s.f.WriteAt(rec, s.size); err != nil {
		return fmt.Errorf("write spool: %w", err)
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("sync spool: %w", err)
	}
	s.size += int64(len(rec))
	return nil
}

// ReadFrom calls fn for each event in the acknowledged records from offset
// on, in order, and returns the offset after the last record it read. It
// may run while Append writes: it stops at the size Append last committed.
func (s *Spool) ReadFrom(offset int64, fn func(beet.Event) error) (int64, error) {
	return s.scan(fn, offset, s.Size())
}

// TruncateIf empties the spool if nothing was appended past end, and
// reports whether it did. The replayer calls it once everything up to end
// is in the database.
func (s *Spool) TruncateIf(end int64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.size != end {
		return false, nil
	}
	if err := s.f.Truncate(0); err != nil {
		return false, fmt.Errorf("truncate spool: %w", err)
	}
	if err := s.f.Sync(); err != nil {
		return false, fmt.Errorf("sync spool: %w", err)
	}
	s.size = 0
	return true, nil
}

// Close closes the file; events still in it are replayed at the next start.
func (s *Spool) Close() error { return s.f.Close() }

func (s *Spool) scan(fn func(beet.Event) error, offset, end int64) (int64, error) {
	if offset >= end {
		return offset, nil
	}
	r := bufio.NewReaderSize(io.NewSectionReader(s.f, offset, end-offset), 64<<10)
	var hdr [recordHeader]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return offset, nil // end of file, or a torn header
		}
		n := binary.LittleEndian.Uint32(hdr[0:4])
		if n == 0 || n > maxRecordBytes {
			return offset, nil
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil {
			return offset, nil
		}
		if crc32.Checksum(payload, crc32c) != binary.LittleEndian.Uint32(hdr[4:8]) {
			return offset, nil
		}
		items, err := decodeRecord(payload)
		if err != nil {
			return offset, nil
		}
		for _, it := range items {
			if err := fn(it); err != nil {
				return offset, err
			}
		}
		offset += recordHeader + int64(n)
	}
}

// encodeRecord lays out: version, count, then per event: id, beet id (0
// when the database was down at receipt), token, received_at (µs), value
// flag + bits, method, user agent, and since version 2 kind, exit code
// flag + code, message, and since version 3 the client address.
func encodeRecord(items []beet.Event) []byte {
	b := make([]byte, 0, 96*len(items))
	b = append(b, spoolVersion)
	b = binary.AppendUvarint(b, uint64(len(items)))
	for _, e := range items {
		b = append(b, e.ID[:]...)
		b = binary.AppendVarint(b, e.BeetID)
		b = appendString(b, e.Token)
		b = binary.AppendVarint(b, e.ReceivedAt.UnixMicro())
		if e.Value != nil {
			b = append(b, 1)
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(*e.Value))
		} else {
			b = append(b, 0)
		}
		b = appendString(b, e.Method)
		b = appendString(b, e.UserAgent)
		b = appendString(b, string(e.Kind))
		if e.ExitCode != nil {
			b = append(b, 1)
			b = binary.AppendVarint(b, int64(*e.ExitCode))
		} else {
			b = append(b, 0)
		}
		b = appendString(b, e.Message)
		b = appendString(b, e.Addr)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errBadRecord = errors.New("bad spool record")

func decodeRecord(p []byte) ([]beet.Event, error) {
	d := decoder{p: p}
	version := d.byte()
	if version < 1 || version > spoolVersion {
		return nil, errBadRecord
	}
	n := d.uvarint()
	if n > uint64(len(p)) {
		return nil, errBadRecord
	}
	items := make([]beet.Event, 0, n)
	for range n {
		var e beet.Event
		copy(e.ID[:], d.bytes(16))
		e.BeetID = d.varint()
		e.Token = d.string()
		e.ReceivedAt = time.UnixMicro(d.varint()).UTC()
		if d.byte() == 1 {
			v := math.Float64frombits(binary.LittleEndian.Uint64(d.bytes(8)))
			e.Value = &v
		}
		e.Method = d.string()
		e.UserAgent = d.string()
		if version >= 2 {
			e.Kind = beet.EventKind(d.string())
			if d.byte() == 1 {
				c := int(d.varint())
				e.ExitCode = &c
			}
			e.Message = d.string()
		}
		if version >= 3 {
			e.Addr = d.string()
		}
		if d.err != nil {
			return nil, d.err
		}
		items = append(items, e)
	}
	return items, d.err
}

// decoder reads a record, remembering the first error so the caller checks once.
type decoder struct {
	p   []byte
	err error
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil || n > len(d.p) {
		d.err = errBadRecord
		return make([]byte, n)
	}
	b := d.p[:n]
	d.p = d.p[n:]
	return b
}

func (d *decoder) byte() byte { return d.bytes(1)[0] }

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.p)
	if n <= 0 {
		d.err = errBadRecord
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.p)
	if n <= 0 {
		d.err = errBadRecord
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if n > maxRecordBytes {
		d.err = errBadRecord
		return ""
	}
	return string(d.bytes(int(n)))
}
