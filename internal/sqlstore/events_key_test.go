package sqlstore_test

import (
	"slices"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/sqlstore"
)

// Migration 00015 rebuilds SQLite's events table on its key (received_at,
// id): every event stored before it is still there, with all its fields,
// and a replay of them stores nothing twice.
func TestEventsKeyMigration(t *testing.T) {
	db := openSQLite(t)
	ctx := t.Context()
	if err := db.MigrateBeforeForTest(ctx, 15); err != nil {
		t.Fatal(err)
	}
	b := oldSchemaBeet(t, db, beet.PlanPro, beet.StatusNew)
	now := time.Now().UTC().Truncate(time.Microsecond)
	v, code, d := 2.5, 3, 1500*time.Millisecond
	evs := []beet.Event{pgEvent(b.ID, now.Add(-time.Hour)), pgEvent(b.ID, now.Add(-time.Minute)), pgEvent(b.ID, now)}
	evs[1].Value, evs[1].Kind = &v, beet.KindStart
	evs[2].Kind, evs[2].ExitCode, evs[2].Duration, evs[2].Message = beet.KindFail, &code, &d, "disk full"
	// Stored as the schema before 00015 had them (AddEvents needs 00016).
	for _, e := range evs {
		var exit, ms any
		if e.ExitCode != nil {
			exit, ms = *e.ExitCode, e.Duration.Milliseconds()
		}
		var value any
		if e.Value != nil {
			value = *e.Value
		}
		msg := any(nil)
		if e.Message != "" {
			msg = e.Message
		}
		if err := db.ExecForTest(ctx, `INSERT INTO events (id, beet_id, received_at, value, method, user_agent, kind, exit_code, duration_ms, message)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, e.ID[:], e.BeetID, e.ReceivedAt.UnixMicro(), value, e.Method, e.UserAgent,
			string(e.Kind), exit, ms, msg); err != nil {
			t.Fatal(err)
		}
	}
	before, err := db.FindEvents(ctx, beet.EventFilter{BeetID: b.ID})
	if err != nil || len(before) != 3 {
		t.Fatalf("before the migration the beet has %d events, %v; want 3", len(before), err)
	}
	migrated(t, db)
	after, err := db.FindEvents(ctx, beet.EventFilter{BeetID: b.ID})
	if err != nil || len(after) != 3 {
		t.Fatalf("after the migration the beet has %d events, %v; want 3", len(after), err)
	}
	for i := range before {
		if !sameEvent(before[i], after[i]) {
			t.Errorf("event %d: %+v before the migration, %+v after", i, *before[i], *after[i])
		}
	}
	replayStoresNothingTwice(t, db, b.ID, evs[:3])
}

func sameEvent(a, b *beet.Event) bool {
	if a.ID != b.ID || a.BeetID != b.BeetID || !a.ReceivedAt.Equal(b.ReceivedAt) || a.Method != b.Method ||
		a.UserAgent != b.UserAgent || a.Kind != b.Kind || a.Message != b.Message {
		return false
	}
	switch {
	case (a.Value == nil) != (b.Value == nil), a.Value != nil && *a.Value != *b.Value:
		return false
	case (a.ExitCode == nil) != (b.ExitCode == nil), a.ExitCode != nil && *a.ExitCode != *b.ExitCode:
		return false
	case (a.Duration == nil) != (b.Duration == nil), a.Duration != nil && *a.Duration != *b.Duration:
		return false
	}
	return true
}

// replayStoresNothingTwice sends a beet's stored events again, as the spool
// replays them after an outage, and checks the beet still has only them.
func replayStoresNothingTwice(t *testing.T, db *sqlstore.DB, beetID int64, stored []beet.Event) {
	t.Helper()
	again := slices.Clone(stored)
	for i := range again {
		again[i].BeetID = beetID
	}
	if err := db.AddEvents(t.Context(), again, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.FindEvents(t.Context(), beet.EventFilter{BeetID: beetID}); len(got) != len(stored) {
		t.Errorf("after a replay the beet has %d events, want %d", len(got), len(stored))
	}
}
