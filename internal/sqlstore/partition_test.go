package sqlstore_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/sqlstore"
	"github.com/beethq/beet/internal/testdb"
)

// pgFixture makes an account on plan with one beet on a PostgreSQL store.
func pgFixture(t *testing.T, db *sqlstore.DB, plan beet.Plan) *beet.Beet {
	t.Helper()
	ctx := t.Context()
	a := &beet.Account{Plan: plan, CreatedAt: time.Now()}
	u := &beet.User{Email: fmt.Sprintf("p%d@example.com", time.Now().UnixNano()), PasswordHash: "x", CreatedAt: time.Now()}
	if err := db.CreateAccount(ctx, a, u); err != nil {
		t.Fatal(err)
	}
	b := &beet.Beet{AccountID: a.ID, Name: "b", Token: beet.NewToken(), Status: beet.StatusNew, Timezone: "UTC",
		Detection: beet.Detection{Mode: beet.ModeAuto}, CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if err := db.CreateBeet(ctx, b); err != nil {
		t.Fatal(err)
	}
	return b
}

// oldSchemaBeet is pgFixture for a store migrated to an older version
// than its code reads: the beet is written with the columns every version
// has, so the store's own beet queries (which name the newest columns)
// are not run before the migration under test.
func oldSchemaBeet(t *testing.T, db *sqlstore.DB, plan beet.Plan, status beet.Status) *beet.Beet {
	t.Helper()
	ctx := t.Context()
	a := &beet.Account{Plan: plan, CreatedAt: time.Now()}
	u := &beet.User{Email: fmt.Sprintf("o%d@example.com", time.Now().UnixNano()), PasswordHash: "x", CreatedAt: time.Now()}
	if err := db.CreateAccount(ctx, a, u); err != nil {
		t.Fatal(err)
	}
	b := &beet.Beet{AccountID: a.ID, Name: "b", Token: beet.NewToken(), Status: status, Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}}
	now := time.Now().UnixMicro()
	if err := db.ExecForTest(ctx, `INSERT INTO beets (account_id, name, token, status, timezone, detection, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`, a.ID, b.Name, b.Token, string(status), b.Timezone, `{"mode":"auto"}`, now); err != nil {
		t.Fatal(err)
	}
	ids, err := db.ReadForTest(ctx, `SELECT id FROM beets WHERE token = '`+b.Token+`'`)
	if err != nil || len(ids) != 1 {
		t.Fatalf("the old-schema beet: %v, %v", ids, err)
	}
	b.ID = ids[0]
	return b
}

// insertOldEvents writes events with the columns they have had since
// migration 00008, for a store migrated to an older version than its code.
func insertOldEvents(t *testing.T, db *sqlstore.DB, evs []beet.Event) {
	t.Helper()
	for _, e := range evs {
		if err := db.ExecForTest(t.Context(), `INSERT INTO events (id, beet_id, received_at, method, user_agent, kind)
			VALUES ($1, $2, $3, $4, $5, $6)`, e.ID[:], e.BeetID, e.ReceivedAt.UnixMicro(), e.Method, e.UserAgent, string(e.Kind)); err != nil {
			t.Fatal(err)
		}
	}
}

var evSeq int64

func pgEvent(beetID int64, at time.Time) beet.Event {
	evSeq++
	var id beet.EventID
	id[0], id[14], id[15] = 0xee, byte(evSeq>>8), byte(evSeq)
	id[1] = byte(at.Unix())
	return beet.Event{ID: id, BeetID: beetID, ReceivedAt: at, Method: "GET", UserAgent: "t", Kind: beet.KindPing}
}

func partitionNames(t *testing.T, db *sqlstore.DB) map[string]bool {
	t.Helper()
	parts, err := db.EventPartitions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, p := range parts {
		out[p.Name] = true
	}
	return out
}

func monthName(t time.Time) string { return "events_" + t.UTC().Format("200601") }

// The migration moves existing events into monthly partitions and keeps
// them readable; ingestion's idempotency holds on the new key.
func TestEventPartitionsMigration(t *testing.T) {
	db := openPostgres(t)
	ctx := t.Context()
	if err := db.MigrateBeforeForTest(ctx, 12); err != nil {
		t.Fatal(err)
	}
	b := oldSchemaBeet(t, db, beet.PlanPro, beet.StatusNew)
	old := time.Date(2024, 2, 29, 23, 59, 59, 999999000, time.UTC) // the last µs of a month
	evs := []beet.Event{pgEvent(b.ID, old), pgEvent(b.ID, old.Add(time.Microsecond)), pgEvent(b.ID, time.Now().UTC().Truncate(time.Microsecond))}
	insertOldEvents(t, db, evs)
	migrated(t, db)
	names := partitionNames(t, db)
	// Three months ahead of this month's first day: from the 29th-31st,
	// AddDate would roll into the month after (29 Nov + 3 months = 1 Mar).
	now := time.Now().UTC()
	firstOfMonth := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	for _, m := range []time.Time{old, old.Add(time.Microsecond), now, firstOfMonth.AddDate(0, 3, 0)} {
		if !names[monthName(m)] {
			t.Errorf("no partition %s after the migration; have %v", monthName(m), names)
		}
	}
	got, err := db.FindEvents(ctx, beet.EventFilter{BeetID: b.ID})
	if err != nil || len(got) != 3 {
		t.Fatalf("after the migration the beet has %d events, %v; want 3", len(got), err)
	}
	st, err := db.EventPartitionState(ctx, time.Now())
	if err != nil || st.DefaultRows != 0 {
		t.Errorf("EventPartitionState = %+v, %v; want no rows in the default partition", st, err)
	}
	// A replay of the same events stores nothing twice.
	replayStoresNothingTwice(t, db, b.ID, evs[:3])
}

// Inserts beyond the partitions made ahead land in the default partition;
// the partition job gives their month a partition of its own, and the
// clean-up drops a month once it ends before every plan's cutoff.
func TestEventPartitionsAheadAndDropped(t *testing.T) {
	url := pgSchemaURL(t)
	db := migrated(t, testdb.OpenUnmigrated(t, url))
	ctx := t.Context()
	now := time.Now().UTC()
	b := pgFixture(t, db, beet.PlanEnterprise)

	st, err := db.EnsureEventPartitions(ctx, now, 3)
	if err != nil {
		t.Fatal(err)
	}
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	if !st.Until.Equal(month.AddDate(0, 4, 0)) || st.DefaultRows != 0 {
		t.Fatalf("EnsureEventPartitions(3 ahead) = %+v; want until %v, default empty", st, month.AddDate(0, 4, 0))
	}
	future := now.AddDate(2, 0, 0)   // past every partition made ahead
	ancient := now.AddDate(-4, 0, 0) // past the longest retention (3 years)
	recent := now                    // kept (a day back was last month's on the 1st: no partition made for it here)
	evs := []beet.Event{pgEvent(b.ID, future), pgEvent(b.ID, ancient), pgEvent(b.ID, ancient.Add(time.Second)), pgEvent(b.ID, recent)}
	if err := db.AddEvents(ctx, evs, nil); err != nil {
		t.Fatalf("AddEvents beyond the partitions: %v", err)
	}
	if got, _ := db.FindEvents(ctx, beet.EventFilter{BeetID: b.ID}); len(got) != 4 {
		t.Fatalf("stored %d events, want 4", len(got))
	}
	if st, _ := db.EventPartitionState(ctx, now); st.DefaultRows != 3 {
		t.Errorf("default partition holds %d rows, want the 3 outside the partitions", st.DefaultRows)
	}

	// Several instances run the job at once: none fails, the months are made once.
	other := testdb.OpenUnmigrated(t, url)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := db
			if i%2 == 1 {
				s = other
			}
			_, errs[i] = s.EnsureEventPartitions(ctx, now, 3)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Errorf("EnsureEventPartitions beside another instance: %v", err)
		}
	}
	if _, err := db.EnsureEventPartitions(ctx, now, 3); err != nil { // whoever lost the lock left work
		t.Fatal(err)
	}
	st, err = db.EventPartitionState(ctx, now)
	if err != nil || st.DefaultRows != 0 {
		t.Fatalf("after the partition job: %+v, %v; want the default partition empty", st, err)
	}
	names := partitionNames(t, db)
	for _, m := range []time.Time{future, ancient} {
		if !names[monthName(m)] {
			t.Errorf("no partition %s for the rows of the default partition; have %v", monthName(m), names)
		}
	}
	if got, _ := db.FindEvents(ctx, beet.EventFilter{BeetID: b.ID}); len(got) != 4 {
		t.Fatalf("after moving rows the beet has %d events, want 4", len(got))
	}

	cutoff := beet.PlanEnterprise.RetentionCutoff(now)
	n, err := db.DropEventsBefore(ctx, cutoff)
	if err != nil || n != 1 {
		t.Fatalf("DropEventsBefore(3 years ago) = %d, %v; want 1 partition", n, err)
	}
	if partitionNames(t, db)[monthName(ancient)] {
		t.Errorf("partition %s still there", monthName(ancient))
	}
	got, _ := db.FindEvents(ctx, beet.EventFilter{BeetID: b.ID})
	if len(got) != 2 {
		t.Fatalf("after the drop the beet has %d events, want the recent and the future one", len(got))
	}
	for _, e := range got {
		if e.ReceivedAt.Before(cutoff) {
			t.Errorf("event at %v survived the drop", e.ReceivedAt)
		}
	}
	if n, err := db.DropEventsBefore(ctx, cutoff); err != nil || n != 0 {
		t.Errorf("second DropEventsBefore = %d, %v; want 0", n, err)
	}
}

// SQLite has no partitions: the job and the drop do nothing.
func TestEventPartitionsSQLite(t *testing.T) {
	db := migrated(t, openSQLite(t))
	if st, err := db.EnsureEventPartitions(t.Context(), time.Now(), 3); err != nil || st != (sqlstore.PartitionState{}) {
		t.Errorf("EnsureEventPartitions on SQLite = %+v, %v", st, err)
	}
	if n, err := db.DropEventsBefore(t.Context(), time.Now()); err != nil || n != 0 {
		t.Errorf("DropEventsBefore on SQLite = %d, %v", n, err)
	}
}
