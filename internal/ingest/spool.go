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
//
// Offsets are logical: they count every byte ever appended since the spool
// was opened, so an offset the replayer holds stays valid when the file is
// emptied or compacted under it.
//
// A second file, path+".applied", holds how far into the spool file the
// database has taken its records (MarkApplied), so that a restart replays
// only the rest: an event applied twice would be stored once but seen twice
// by detection. It is written after the commit it records is durable, and
// set back to 0 before the spool file is emptied or replaced, so at worst
// it lags (a record applied again after a power cut), never runs ahead.
type Spool struct {
	mu      sync.Mutex
	path    string
	f       *os.File
	pos     *os.File // path+".applied"
	base    int64    // the logical offset of the file's first byte
	size    int64    // bytes of whole records in the file
	applied int64    // file offset up to which the database has the records
	maxSize int64
}

var crc32c = crc32.MakeTable(crc32.Castagnoli)

const (
	recordHeader   = 8
	maxRecordBytes = 1 << 20
	spoolVersion   = 4 // 2 added kind, exit code and message, 3 the client address, 4 the run ID; older ones are still read
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
	os.Remove(path + ".tmp") // a compaction a crash cut short; the spool is whole
	pos, err := os.OpenFile(path+".applied", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open spool: %w", err)
	}
	s := &Spool{path: path, f: f, pos: pos, maxSize: maxSize}
	info, err := f.Stat()
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("stat spool: %w", err)
	}
	// A position that is not the end of a record of this file (one left
	// beside another file) is not trusted: replaying from 0 loses nothing.
	applied := readPosition(pos)
	onRecord := applied == 0
	good, err := scanFile(f, func(_ []beet.Event, end int64) error {
		onRecord = onRecord || end == applied
		return nil
	}, 0, info.Size())
	if err != nil {
		s.Close()
		return nil, err
	}
	if err := f.Truncate(good); err != nil {
		s.Close()
		return nil, fmt.Errorf("cut torn spool tail: %w", err)
	}
	s.size = good
	if onRecord {
		s.applied = applied
	}
	return s, nil
}

// readPosition reads the applied offset: 8 bytes and their CRC-32C, or 0
// if the file is empty or not whole.
func readPosition(f *os.File) int64 {
	var b [12]byte
	if _, err := f.ReadAt(b[:], 0); err != nil {
		return 0
	}
	if crc32.Checksum(b[:8], crc32c) != binary.LittleEndian.Uint32(b[8:]) {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(b[:8]))
}

// writePosition records the applied file offset; the caller holds mu.
// sync fsyncs it, for the writes that must reach the disk before the spool
// file changes.
func (s *Spool) writePosition(off int64, sync bool) error {
	var b [12]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(off))
	binary.LittleEndian.PutUint32(b[8:], crc32.Checksum(b[:8], crc32c))
	if _, err := s.pos.WriteAt(b[:], 0); err != nil {
		return fmt.Errorf("write spool position: %w", err)
	}
	if sync {
		if err := s.pos.Sync(); err != nil {
			return fmt.Errorf("sync spool position: %w", err)
		}
	}
	s.applied = off
	return nil
}

// Applied is the logical offset up to which the database has the spooled
// records, as recorded by MarkApplied (here or before a restart).
func (s *Spool) Applied() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.base + s.applied
}

// MarkApplied records that the database has, durably, every record up to
// the logical offset end. It is not fsync'd: it survives a crash of Beet,
// and after a power cut the position may be older, never newer, than the
// database.
func (s *Spool) MarkApplied(end int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	off := end - s.base
	if off <= s.applied || off > s.size {
		return nil
	}
	return s.writePosition(off, false)
}

// Size returns the bytes of events waiting in the spool.
func (s *Spool) Size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.size
}

// Room returns the bytes the spool can still take before it is full.
func (s *Spool) Room() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxSize - s.size
}

// Append writes the events as one record (or a few, for a group too large
// for one: recordParts) and fsyncs once. Only when it returns
// nil are the events safe to acknowledge.
func (s *Spool) Append(items []beet.Event) error {
	// A group too large for one record (the reader takes a length over
	// maxRecordBytes for a torn header; 10,000 events with 10,000-byte
	// messages are about 100 MiB) is written as several, fsync'd together.
	rec := make([]byte, 0, recordHeader+96*len(items))
	start, size := 0, 0
	for i := range items {
		e := &items[i]
		n := 128 + len(e.Token) + len(e.UserAgent) + len(e.Message) + len(e.Addr) + len(e.RID) // generously
		if i > start && size+n > maxRecordBytes {
			rec = appendRecord(rec, items[start:i])
			start, size = i, 0
		}
		size += n
	}
	rec = appendRecord(rec, items[start:])
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

// Start is the logical offset of the first record still in the spool.
func (s *Spool) Start() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.base
}

// End is the logical offset after the last record appended.
func (s *Spool) End() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.base + s.size
}

// ReadFrom calls fn for each event in the acknowledged records from the
// logical offset on (from Start if it is before it), in order, and returns
// the offset after the last record it read. It may run while Append
// writes: it stops at the size Append last committed. Only the replayer
// reads, and only the replayer empties or compacts, so the file does not
// change under it.
func (s *Spool) ReadFrom(offset int64, fn func(beet.Event) error) (int64, error) {
	return s.ReadRecords(offset, func(items []beet.Event, _ int64) error {
		for _, it := range items {
			if err := fn(it); err != nil {
				return err
			}
		}
		return nil
	})
}

// ReadRecords is ReadFrom a record at a time: fn gets each record's events
// and the logical offset after it.
func (s *Spool) ReadRecords(offset int64, fn func(items []beet.Event, end int64) error) (int64, error) {
	s.mu.Lock()
	base, size, f := s.base, s.size, s.f
	s.mu.Unlock()
	offset = max(offset, base)
	end, err := scanFile(f, func(items []beet.Event, end int64) error { return fn(items, base+end) }, offset-base, size)
	return base + end, err
}

// TruncateIf empties the spool if nothing was appended past the logical
// offset end, and reports whether it did. The replayer calls it once
// everything up to end is in the database.
func (s *Spool) TruncateIf(end int64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.base+s.size != end {
		return false, nil
	}
	if err := s.writePosition(0, true); err != nil {
		return false, err
	}
	if err := s.f.Truncate(0); err != nil {
		return false, fmt.Errorf("truncate spool: %w", err)
	}
	if err := s.f.Sync(); err != nil {
		return false, fmt.Errorf("sync spool: %w", err)
	}
	s.base, s.size = end, 0
	return true, nil
}

// CompactTo drops the records before the logical offset end, which the
// replayer has put in the database, when they are at least minBytes: the
// records after end are copied to a new file that replaces the spool by
// rename, so a crash leaves either file whole. It reports whether it did.
// Under a steady stream of appends (the journal) the spool is never empty
// when the replayer catches up, and TruncateIf alone would let it grow.
func (s *Spool) CompactTo(end, minBytes int64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	head := end - s.base
	if head < minBytes || head > s.size {
		return false, nil
	}
	tail := make([]byte, s.size-head)
	if _, err := s.f.ReadAt(tail, head); err != nil {
		return false, fmt.Errorf("read spool tail: %w", err)
	}
	tmp := s.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return false, fmt.Errorf("compact spool: %w", err)
	}
	if _, err = f.Write(tail); err == nil {
		err = f.Sync()
	}
	if err == nil {
		// The new file's records are all unapplied.
		err = s.writePosition(0, true)
	}
	if err == nil {
		err = os.Rename(tmp, s.path)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return false, fmt.Errorf("compact spool: %w", err)
	}
	// Renamed: the new file is the spool from here on, whatever the
	// directory's fsync says, or appends would go to an unlinked file.
	s.f.Close()
	s.f, s.base, s.size = f, end, int64(len(tail))
	if err := syncDir(filepath.Dir(s.path)); err != nil {
		return true, fmt.Errorf("compact spool: sync its directory: %w", err)
	}
	return true, nil
}

// syncDir fsyncs a directory, so that a rename in it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Close closes the files; events still in the spool are replayed at the
// next start.
func (s *Spool) Close() error { return errors.Join(s.f.Close(), s.pos.Close()) }

// scanFile calls fn for each whole record in f between the file offsets
// offset and end, with the file offset after it, and returns the offset
// after the last one it read.
func scanFile(f *os.File, fn func(items []beet.Event, end int64) error, offset, end int64) (int64, error) {
	if offset >= end {
		return offset, nil
	}
	// The journal reads a few records at a time: no 64 KiB buffer for them.
	r := bufio.NewReaderSize(io.NewSectionReader(f, offset, end-offset), int(min(64<<10, end-offset)))
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
		if err := fn(items, offset+recordHeader+int64(n)); err != nil {
			return offset, err
		}
		offset += recordHeader + int64(n)
	}
}

// encodeRecord lays out: version, count, then per event: id, beet id (0
// when the database was down at receipt), token, received_at (µs), value
// flag + bits, method, user agent, and since version 2 kind, exit code
// flag + code, message, since version 3 the client address, and since
// version 4 the run ID.
func encodeRecord(items []beet.Event) []byte {
	return appendEncoded(make([]byte, 0, 96*len(items)), items)
}

// appendRecord appends items as one record: header, then payload.
func appendRecord(rec []byte, items []beet.Event) []byte {
	at := len(rec)
	rec = append(rec, make([]byte, recordHeader)...)
	rec = appendEncoded(rec, items)
	payload := rec[at+recordHeader:]
	binary.LittleEndian.PutUint32(rec[at:at+4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(rec[at+4:at+8], crc32.Checksum(payload, crc32c))
	return rec
}

func appendEncoded(b []byte, items []beet.Event) []byte {
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
		b = appendString(b, e.RID)
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
		if version >= 4 {
			e.RID = d.string()
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

func (d *decoder) uvarint() uint64 { return readVarint(d, binary.Uvarint) }
func (d *decoder) varint() int64   { return readVarint(d, binary.Varint) }

// readVarint reads one varint with read (binary.Uvarint or binary.Varint).
func readVarint[T uint64 | int64](d *decoder, read func([]byte) (T, int)) T {
	v, n := read(d.p)
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
