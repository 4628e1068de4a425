package sqlstore_test

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/testdb"
)

// On SQLite, ingestion does not read a beet it holds in memory (migration
// 00016): every change to a beet's row that ingestion did not make must
// still reach its next commit. This one comes from outside Beet's store
// altogether (another connection to the file, as the sqlite3 shell or
// another process would write): a changed status reason, a rotated token
// and a deletion, each seen by the very next commit.
func TestIngestSeesBeetChangesMadeOutside(t *testing.T) {
	ctx := context.Background()
	u := testdb.URL(t, "sqlite")
	db := testdb.Open(t, u)
	raw, err := sql.Open("sqlite", "file:"+strings.TrimPrefix(u, "sqlite://")+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	b := pgFixture(t, db, beet.PlanPro)

	var seen string
	observe := func(x *beet.Beet, _ beet.EventSpan) []beet.Flip {
		seen = x.StatusReason
		x.StatusReason = "ingested"
		return nil
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	send := func(token string) int64 {
		t.Helper()
		at = at.Add(time.Second)
		ev := pgEvent(0, at)
		ev.Token = token
		evs := []beet.Event{ev}
		if err := db.AddEvents(ctx, evs, observe); err != nil {
			t.Fatal(err)
		}
		return evs[0].BeetID
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := raw.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}

	send(b.Token)
	send(b.Token) // the store now holds the beet
	if seen != "ingested" {
		t.Fatalf("the second commit saw status reason %q, want its own %q", seen, "ingested")
	}
	exec(`UPDATE beets SET status_reason = 'set outside' WHERE id = ?`, b.ID)
	send(b.Token)
	if seen != "set outside" {
		t.Fatalf("after an UPDATE from another connection the commit saw status reason %q, want %q", seen, "set outside")
	}

	newToken := beet.NewToken()
	exec(`UPDATE beets SET token = ? WHERE id = ?`, newToken, b.ID)
	if id := send(b.Token); id != 0 {
		t.Fatalf("an event with the token rotated from another connection was stored for beet %d", id)
	}
	if id := send(newToken); id != b.ID {
		t.Fatalf("an event with the new token went to beet %d, want %d", id, b.ID)
	}

	exec(`DELETE FROM accounts WHERE id = ?`, b.AccountID) // the beet goes with its account
	if id := send(newToken); id != 0 {
		t.Fatalf("an event for a beet deleted from another connection was stored for beet %d", id)
	}
}

// A steady commit on SQLite (16 pings for 16 beets the store holds, as in
// BenchmarkAddEventsSpread) reads no beet row and copies no beet: it
// allocates about 325 times (387 when each commit read the versions of its
// beets and copied them out of the cache). The bound leaves room for a
// driver's or Go's small changes, not for the probe's return.
func TestSteadyCommitAllocations(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t, "sqlite")
	b := pgFixture(t, db, beet.PlanPro)
	const per = 16
	toks := make([]string, per)
	for i := range toks {
		toks[i] = "steady-" + strconv.Itoa(i)
		if err := db.CreateBeet(ctx, &beet.Beet{AccountID: b.AccountID, Name: toks[i], Token: toks[i], Status: beet.StatusNew,
			Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}, CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	observe := func(x *beet.Beet, sp beet.EventSpan) []beet.Flip {
		due := sp.Last.Add(time.Hour)
		x.DueAt = &due
		m := make([]byte, 200) // about a learned model's size
		copy(m, x.Model)
		m[0]++
		x.Model = m
		return nil
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	commit := func() {
		at = at.Add(time.Second)
		evs := make([]beet.Event, per)
		for i := range evs {
			evs[i] = pgEvent(0, at)
			evs[i].Token = toks[i]
		}
		// With a deadline, as the writer commits: the driver must not
		// start a goroutine a statement to watch it.
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := db.AddEvents(ctx, evs, observe); err != nil {
			t.Fatal(err)
		}
	}
	commit() // the beets are read once and held from then on
	allocs := testing.AllocsPerRun(50, commit)
	t.Logf("%.0f allocations a commit of %d events", allocs, per)
	if allocs > 340 {
		t.Errorf("a steady commit of %d events allocated %.0f times, want at most 340", per, allocs)
	}
}

// A change to more beets than beet_changes holds (a sweep that flips most
// of them, a bulk edit) keeps the list bounded and makes the next commit
// forget every beet it holds: none is read from a stale copy.
func TestIngestSeesBulkBeetChanges(t *testing.T) {
	ctx := context.Background()
	u := testdb.URL(t, "sqlite")
	db := testdb.Open(t, u)
	b := pgFixture(t, db, beet.PlanPro)
	const n = 5000 // more than the 4,096 a commit reads
	us := time.Now().UnixMicro()
	if err := db.ExecForTest(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1)
		INSERT INTO beets (account_id, name, token, status, status_since, timezone, detection, created_at, updated_at)
		SELECT $2, 'bulk ' || i, 'bulk-token-' || i, 'up', $3, 'UTC', '{"mode":"auto"}', $3, $3 FROM n`, n, b.AccountID, us); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	observe := func(x *beet.Beet, _ beet.EventSpan) []beet.Flip {
		seen[x.Token] = x.StatusReason
		x.StatusReason = "ingested"
		return nil
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	toks := []string{"bulk-token-1", "bulk-token-" + strconv.Itoa(n)}
	send := func() {
		t.Helper()
		at = at.Add(time.Second)
		evs := make([]beet.Event, len(toks))
		for i, tok := range toks {
			evs[i] = pgEvent(0, at)
			evs[i].Token = tok
		}
		if err := db.AddEvents(ctx, evs, observe); err != nil {
			t.Fatal(err)
		}
	}
	send()
	send() // held from here on
	if err := db.ExecForTest(ctx, `UPDATE beets SET status_reason = 'bulk'`); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+strings.TrimPrefix(u, "sqlite://")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var listed int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM beet_changes`).Scan(&listed); err != nil {
		t.Fatal(err)
	}
	if listed >= 4096 {
		t.Errorf("beet_changes holds %d rows after a bulk UPDATE of %d beets, want it bounded under 4,096", listed, n)
	}
	send()
	for _, tok := range toks {
		if seen[tok] != "bulk" {
			t.Errorf("after a bulk UPDATE the commit saw %s's status reason %q, want %q", tok, seen[tok], "bulk")
		}
	}
}
