package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/beethq/beet"
)

var importTests = []struct {
	name string
	fn   func(t *testing.T, s beet.Store)
}{
	{"ImportedBeets", testImportedBeets},
	{"ReimportedTokenRecords", testReimportedTokenRecords},
	{"ResumeOnEvent", testResumeOnEvent},
	{"ImportedState", testImportedState},
}

// testImportedBeets: an imported beet is created with its tags and its
// source key, which the account imports once (another account may import
// the same key); a UUID token works like any other; a taken token is a
// conflict that writes nothing; deleting the beet forgets its key.
func testImportedBeets(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a, other := newAccount(t, s, beet.PlanFree), newAccount(t, s, beet.PlanFree)
	const uuid = "31365bce-8da9-4729-8ff3-aaa71d56b712"
	mk := func(accountID int64, token string) *beet.Beet {
		return &beet.Beet{AccountID: accountID, Name: uniq("imported "), Token: token, Status: beet.StatusNew, Timezone: "UTC",
			Detection: beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600, GraceSeconds: 600}, CreatedAt: t0, UpdatedAt: t0}
	}
	b := mk(a.ID, uuid)
	if err := s.CreateImportedBeet(ctx, b, []string{"backup", "fs"}, "healthchecks:k1", nil); err != nil {
		t.Fatal(err)
	}
	if got, err := s.FindBeetByToken(ctx, uuid); err != nil || got.ID != b.ID || got.Detection != b.Detection {
		t.Fatalf("FindBeetByToken(uuid) = %+v, %v; want beet %d", got, err, b.ID)
	}
	if tags, err := s.FindBeetTags(ctx, []int64{b.ID}); err != nil || !slices.Equal(tags[b.ID], []string{"backup", "fs"}) {
		t.Errorf("tags %v, %v", tags, err)
	}
	if id, err := s.FindImportedBeet(ctx, a.ID, "healthchecks:k1"); err != nil || id != b.ID {
		t.Errorf("FindImportedBeet = %d, %v; want %d", id, err, b.ID)
	}
	_, err := s.FindImportedBeet(ctx, other.ID, "healthchecks:k1")
	wantCode(t, "FindImportedBeet from another account", err, beet.ENOTFOUND)

	wantCode(t, "the same key again", s.CreateImportedBeet(ctx, mk(a.ID, beet.NewToken()), nil, "healthchecks:k1", nil), beet.ECONFLICT)
	taken := mk(other.ID, uuid)
	wantCode(t, "a taken token", s.CreateImportedBeet(ctx, taken, []string{"x"}, "healthchecks:k1", nil), beet.ECONFLICT)
	_, err = s.FindImportedBeet(ctx, other.ID, "healthchecks:k1")
	wantCode(t, "FindImportedBeet after the refused import", err, beet.ENOTFOUND)
	if bs, n, err := s.FindBeets(ctx, beet.BeetFilter{AccountID: &other.ID, Limit: 10}); err != nil || n != 0 || len(bs) != 0 {
		t.Errorf("the refused import left %d beets, %v", n, err)
	}
	if err := s.CreateImportedBeet(ctx, mk(other.ID, beet.NewToken()), nil, "healthchecks:k1", nil); err != nil {
		t.Errorf("another account imports the same key: %v", err)
	}

	if err := s.DeleteBeet(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.FindImportedBeet(ctx, a.ID, "healthchecks:k1")
	wantCode(t, "FindImportedBeet after DeleteBeet", err, beet.ENOTFOUND)
}

// testReimportedTokenRecords: an imported beet deleted and imported again
// (MIGRATING.md: "the next import creates it again") gets its check's UUID
// back as a new beet, and the events sent with that token are the new
// beet's from the next commit on, though the store's commits saw the token
// on the old beet.
func testReimportedTokenRecords(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	const uuid = "803f680d-e89b-492b-82ef-2be7b774a92d"
	mk := func() *beet.Beet {
		b := &beet.Beet{AccountID: a.ID, Name: uniq("imported "), Token: uuid, Status: beet.StatusNew, Timezone: "UTC",
			Detection: beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600, GraceSeconds: 600}, CreatedAt: t0, UpdatedAt: t0}
		if err := s.CreateImportedBeet(ctx, b, nil, "healthchecks:re", nil); err != nil {
			t.Fatal(err)
		}
		return b
	}
	ping := func(at time.Time) []beet.Event {
		evs := events(0, at, time.Second, 2)
		for i := range evs {
			evs[i].Token = uuid
		}
		addEvents(t, s, evs)
		return evs
	}
	old := mk()
	ping(t0)
	if err := s.DeleteBeet(ctx, old.ID); err != nil {
		t.Fatal(err)
	}
	ping(t0.Add(time.Minute)) // nobody's: dropped
	b := mk()
	for i, e := range ping(t0.Add(2 * time.Minute)) {
		if e.BeetID != b.ID {
			t.Errorf("event %d after the second import: beet %d, want the new beet %d", i, e.BeetID, b.ID)
		}
	}
	if got, err := s.FindEvents(ctx, beet.EventFilter{BeetID: b.ID}); err != nil || len(got) != 2 {
		t.Fatalf("the imported-again beet has %d events (%v), want 2", len(got), err)
	}
}

// testResumeOnEvent: resume_on_event is stored at creation, changed by
// UpdateBeet, and reaches the observer of every ingestion commit as the
// row holds it (a change between two commits included, whatever the
// store keeps of the beet between them), so a paused beet with it set
// resumes on its event and one without stays paused.
func testResumeOnEvent(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b := &beet.Beet{AccountID: a.ID, Name: uniq("resumes "), Token: beet.NewToken(), Status: beet.StatusNew, Timezone: "UTC",
		Detection: beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600, GraceSeconds: 600}, ResumeOnEvent: true, CreatedAt: t0}
	if err := s.CreateBeet(ctx, b); err != nil {
		t.Fatal(err)
	}
	if got, err := s.FindBeetByID(ctx, b.ID); err != nil || !got.ResumeOnEvent {
		t.Fatalf("created with resume_on_event: %+v, %v", got, err)
	}
	// The observer resumes a paused beet that has the setting, as the
	// service's does (detect.ApplyEvents).
	observe := func(b *beet.Beet, sp beet.EventSpan) []beet.Flip {
		if b.Status != beet.StatusPaused || !b.ResumeOnEvent {
			return nil
		}
		b.Status, b.StatusReason, b.StatusSince = beet.StatusUp, "resumed", sp.First
		return []beet.Flip{{At: sp.First, From: beet.StatusPaused, To: beet.StatusUp, Kind: beet.FlipManual, Reason: "resumed"}}
	}
	ping := func(at time.Time) {
		t.Helper()
		if err := s.AddEvents(ctx, events(b.ID, at, time.Second, 1), observe); err != nil {
			t.Fatal(err)
		}
	}
	status := func() beet.Status {
		t.Helper()
		got, err := s.FindBeetByID(ctx, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Status
	}
	ping(t0) // the store now knows the beet from a commit
	flip(t, s, b.ID, t0.Add(time.Minute), beet.StatusNew, beet.StatusPaused, beet.FlipManual)
	if _, err := s.UpdateBeet(ctx, b.ID, beet.BeetUpdate{ResumeOnEvent: ptr(false)}, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	ping(t0.Add(2 * time.Minute))
	if st := status(); st != beet.StatusPaused {
		t.Fatalf("resume_on_event off: an event left the beet %s, want paused", st)
	}
	if got, err := s.UpdateBeet(ctx, b.ID, beet.BeetUpdate{ResumeOnEvent: ptr(true)}, t0.Add(3*time.Minute)); err != nil || !got.ResumeOnEvent {
		t.Fatalf("UpdateBeet(resume_on_event: true) = %+v, %v", got, err)
	}
	ping(t0.Add(4 * time.Minute))
	if st := status(); st != beet.StatusUp {
		t.Fatalf("resume_on_event on: an event left the beet %s, want up", st)
	}
	fs, err := s.FindFlips(ctx, b.ID, 1)
	if err != nil || len(fs) != 1 || fs[0].From != beet.StatusPaused || fs[0].To != beet.StatusUp {
		t.Fatalf("newest flip %+v, %v; want paused→up", fs, err)
	}
}

// testImportedState: a beet imported with its state (last event, status,
// deadline) and the flips that led there has them stored with it, the
// last flip's time as its status_since.
func testImportedState(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	last, due := t0.Add(-time.Hour), t0.Add(10*time.Minute)
	b := &beet.Beet{AccountID: a.ID, Name: uniq("imported "), Token: beet.NewToken(), Status: beet.StatusUp, StatusReason: "imported up",
		Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600, GraceSeconds: 600},
		LastEventAt: &last, DueAt: &due, ResumeOnEvent: true, CreatedAt: t0}
	flips := []beet.Flip{{At: t0, From: beet.StatusNew, To: beet.StatusUp, Kind: beet.FlipFirst, Reason: "imported up"}}
	if err := s.CreateImportedBeet(ctx, b, nil, "healthchecks:state", flips); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindBeetByID(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != beet.StatusUp || got.StatusReason != "imported up" || !got.ResumeOnEvent {
		t.Errorf("imported beet %+v", got)
	}
	sameTimePtr(t, "last_event_at", got.LastEventAt, &last)
	sameTimePtr(t, "due_at", got.DueAt, &due)
	sameTime(t, "status_since", got.StatusSince, t0)
	fs, err := s.FindFlips(ctx, b.ID, 10)
	if err != nil || len(fs) != 1 || fs[0].To != beet.StatusUp || fs[0].Kind != beet.FlipFirst {
		t.Fatalf("flips %+v, %v; want the import's new→up", fs, err)
	}
	if due, err := s.FindDueBeets(ctx, due, 10); err != nil || len(due) != 1 || due[0].ID != b.ID {
		t.Errorf("FindDueBeets at its deadline = %v, %v; want the imported beet", due, err)
	}
}
