package ingest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
)

func spoolItems(n, from int) []beet.Event {
	var items []beet.Event
	for i := from; i < from+n; i++ {
		ev := beet.Event{BeetID: int64(i + 1), ReceivedAt: time.UnixMicro(1_700_000_000_000_000 + int64(i)).UTC(), Method: "POST", UserAgent: "ua"}
		ev.ID[0], ev.ID[1] = byte(i), byte(i>>8)
		if i%2 == 0 {
			v := float64(i) / 3
			ev.Value = &v
		}
		ev.Token = beet.NewToken()
		if i%2 == 1 {
			ev.Addr = "192.0.2.7"
		}
		if i%3 == 0 {
			ev.BeetID = 0 // looked up at replay
		}
		switch i % 4 {
		case 1:
			ev.Kind = beet.KindStart
		case 2:
			code := i % 256
			ev.Kind, ev.ExitCode, ev.Message = beet.KindFail, &code, "disk full ✗"
		}
		items = append(items, ev)
	}
	return items
}

func readAll(t *testing.T, s *Spool) []beet.Event {
	t.Helper()
	var got []beet.Event
	if _, err := s.ReadFrom(0, func(e beet.Event) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return got
}

func sameItem(a, b beet.Event) bool {
	return a.Token == b.Token && a.ID == b.ID && a.BeetID == b.BeetID && a.ReceivedAt.Equal(b.ReceivedAt) &&
		a.Method == b.Method && a.UserAgent == b.UserAgent &&
		(a.Value == nil) == (b.Value == nil) && (a.Value == nil || *a.Value == *b.Value) &&
		a.Kind == b.Kind && a.Message == b.Message && a.Addr == b.Addr &&
		(a.ExitCode == nil) == (b.ExitCode == nil) && (a.ExitCode == nil || *a.ExitCode == *b.ExitCode)
}

// TestSpoolReadsVersion1: a spool left by a version that knew no signals
// replays, its events as plain pings; one left by a version that kept no
// client address replays without it.
func TestSpoolReadsVersion1(t *testing.T) {
	ev := spoolItems(1, 0)[0]
	// Version 1's layout: encodeRecord's without the fields versions 2 to 4 append.
	v4 := encodeRecord([]beet.Event{ev})
	v1 := append([]byte{1}, v4[1:len(v4)-5]...) // no kind (""), code flag 0, message (""), address (""), run ID ("")
	got, err := decodeRecord(v1)
	if err != nil || len(got) != 1 || !sameItem(got[0], ev) || got[0].Kind != "" {
		t.Fatalf("version 1 record: %+v, %v", got, err)
	}
	v2 := append([]byte{2}, v4[1:len(v4)-2]...) // no address (""), no run ID ("")
	if got, err := decodeRecord(v2); err != nil || len(got) != 1 || !sameItem(got[0], ev) {
		t.Fatalf("version 2 record: %+v, %v", got, err)
	}
	v3 := append([]byte{3}, v4[1:len(v4)-1]...) // no run ID ("")
	if got, err := decodeRecord(v3); err != nil || len(got) != 1 || !sameItem(got[0], ev) {
		t.Fatalf("version 3 record: %+v, %v", got, err)
	}
}

// TestSpoolLargeGroup: a group of events too large for one record (long
// messages, run IDs) is appended as several records and read back whole,
// in order, with its run IDs.
func TestSpoolLargeGroup(t *testing.T) {
	s, err := OpenSpool(filepath.Join(t.TempDir(), "beet.spool"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	items := spoolItems(300, 0)
	for i := range items {
		items[i].Message = strings.Repeat(string(rune('a'+i%26)), beet.MaxMessageLen)
		items[i].RID = "0f8fad5b-d9cb-469f-a165-70867728950e"
	}
	if err := s.Append(items); err != nil {
		t.Fatal(err)
	}
	var got []beet.Event
	records := 0
	if _, err := s.ReadRecords(0, func(evs []beet.Event, _ int64) error { records++; got = append(got, evs...); return nil }); err != nil {
		t.Fatal(err)
	}
	if records < 3 || len(got) != len(items) {
		t.Fatalf("%d records holding %d events, want several holding %d", records, len(got), len(items))
	}
	for i := range got {
		if got[i].ID != items[i].ID || got[i].Message != items[i].Message || got[i].RID != items[i].RID {
			t.Fatalf("event %d read back as %+v", i, got[i])
		}
	}
}

func TestSpoolRoundTripAndTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "beet.spool")
	s, err := OpenSpool(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := append(spoolItems(5, 0), spoolItems(7, 5)...)
	if err := s.Append(want[:5]); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(want[5:]); err != nil {
		t.Fatal(err)
	}
	good := s.Size()
	s.Close()

	// A crash mid-append leaves half a record: reopening cuts it off and
	// keeps every acknowledged one.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte{200, 0, 0, 0, 1, 2, 3, 4, 5})
	f.Close()
	s, err = OpenSpool(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Size() != good {
		t.Fatalf("size after reopen %d, want %d", s.Size(), good)
	}
	got := readAll(t, s)
	if len(got) != len(want) {
		t.Fatalf("read %d events, want %d", len(got), len(want))
	}
	for i := range want {
		if !sameItem(got[i], want[i]) {
			t.Fatalf("event %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if ok, _ := s.TruncateIf(good - 1); ok {
		t.Fatal("TruncateIf emptied a spool with unread records")
	}
	if ok, err := s.TruncateIf(good); !ok || err != nil || s.Size() != 0 || len(readAll(t, s)) != 0 {
		t.Fatalf("TruncateIf(end) = %v, %v; size %d", ok, err, s.Size())
	}
}

func TestSpoolCorruptRecordStopsReading(t *testing.T) {
	path := filepath.Join(t.TempDir(), "beet.spool")
	s, _ := OpenSpool(path, 0)
	s.Append(spoolItems(2, 0))
	first := s.Size()
	s.Append(spoolItems(2, 2))
	s.Close()
	b, _ := os.ReadFile(path)
	b[first+recordHeader+3] ^= 0xff // flip a byte inside the second record
	os.WriteFile(path, b, 0o600)
	s, _ = OpenSpool(path, 0)
	defer s.Close()
	if got := readAll(t, s); len(got) != 2 || s.Size() != first {
		t.Fatalf("after corruption: %d events, size %d; want 2 events, size %d", len(got), s.Size(), first)
	}
}

func TestSpoolFull(t *testing.T) {
	s, _ := OpenSpool(filepath.Join(t.TempDir(), "beet.spool"), 200)
	defer s.Close()
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		err = s.Append(spoolItems(1, i))
	}
	if err != ErrSpoolFull || s.Size() > 200 {
		t.Fatalf("err %v, size %d; want ErrSpoolFull within 200 bytes", err, s.Size())
	}
}

// FuzzDecodeRecord feeds arbitrary bytes to the record decoder: it must
// never panic or allocate without bound.
func FuzzDecodeRecord(f *testing.F) {
	f.Add(encodeRecord(spoolItems(3, 0)))
	f.Add([]byte{1, 0})
	f.Add([]byte{1, 255, 255, 255, 255, 15})
	f.Fuzz(func(t *testing.T, p []byte) {
		items, err := decodeRecord(p)
		if err == nil {
			if again, err := decodeRecord(encodeRecord(items)); err != nil || len(again) != len(items) {
				t.Fatalf("re-encoding %d decoded items: %v", len(items), err)
			}
		}
	})
}

// TestSpoolCompactKeepsTheUnappliedTail: compaction drops the applied
// head, keeps the records after it in order (across a reopen), leaves no
// file of its own behind, and starts the new file unapplied; logical
// offsets taken before it still read the same records.
func TestSpoolCompactKeepsTheUnappliedTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool")
	s, err := OpenSpool(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	items := spoolItems(9, 0)
	for i := 0; i < 9; i += 3 {
		if err := s.Append(items[i : i+3]); err != nil {
			t.Fatal(err)
		}
		if i == 3 {
			if err := s.MarkApplied(s.End()); err != nil {
				t.Fatal(err)
			}
		}
	}
	applied := s.Applied()
	if ok, err := s.CompactTo(applied, 1<<20); ok || err != nil {
		t.Fatalf("compacted a head under minBytes: %v, %v", ok, err)
	}
	if ok, err := s.CompactTo(applied, 0); !ok || err != nil {
		t.Fatalf("CompactTo = %v, %v", ok, err)
	}
	if s.Start() != applied || s.Applied() != applied || s.End() <= applied {
		t.Fatalf("after compaction: start %d, applied %d, end %d; want start = applied = %d < end", s.Start(), s.Applied(), s.End(), applied)
	}
	var tail []beet.Event
	if _, err := s.ReadFrom(applied, func(e beet.Event) error { tail = append(tail, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(tail) != 3 || !sameItem(tail[0], items[6]) || !sameItem(tail[2], items[8]) {
		t.Fatalf("read %d events after compaction, want items 6-8", len(tail))
	}
	s.Close()
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("compaction left its file: %v", err)
	}
	s, _ = OpenSpool(path, 0)
	defer s.Close()
	if got := readAll(t, s); len(got) != 3 || !sameItem(got[0], items[6]) {
		t.Fatalf("reopened: %d events, want items 6-8", len(got))
	}
	if s.Applied() != 0 {
		t.Fatalf("reopened compacted spool: applied %d, want 0", s.Applied())
	}
}

// TestSpoolDistrustsAStrayPosition: a position that is not the end of a
// record of this file (a crash between writing a new spool file and its
// position, or a file replaced by hand) is taken as 0, so nothing is
// skipped; a compaction's leftover file is removed.
func TestSpoolDistrustsAStrayPosition(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spool")
	s, _ := OpenSpool(path, 0)
	s.Append(spoolItems(4, 0))
	s.MarkApplied(s.End())
	s.Close()
	os.WriteFile(path+".tmp", []byte("half a compaction"), 0o600)
	// The same position, over a file whose first record is longer.
	os.Remove(path)
	s, _ = OpenSpool(path, 0)
	s.Append(spoolItems(6, 0))
	s.Close()
	pos, _ := os.ReadFile(path + ".applied")
	s, _ = OpenSpool(path, 0)
	defer s.Close()
	if len(pos) != 12 {
		t.Fatalf("position file holds %d bytes, want 12", len(pos))
	}
	if s.Applied() != 0 {
		t.Fatalf("a position inside a record was trusted: applied %d", s.Applied())
	}
	if len(readAll(t, s)) != 6 {
		t.Fatal("records lost")
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("leftover compaction file still there: %v", err)
	}
}
