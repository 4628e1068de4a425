package sqlstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/sqlstore"
	"github.com/beethq/beet/internal/testdb"
)

// TestWALStaysBounded: under a stream of ingestion commits with no pause
// for the checkpointer to catch up, the SQLite WAL file stays near
// walBoundPages (the writer's own checkpoint at that size lets it be
// restarted), so a busy server's disk use does not grow with its uptime.
// It fails if the writer's checkpoint is turned off
// (wal_autocheckpoint=0).
func TestWALStaysBounded(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "beet.db")
	db := testdb.Open(t, "sqlite://"+path)
	var toks []string
	for _, b := range newAutoBeets(t, db, "walbound@example.com", 8) {
		toks = append(toks, b.Token)
	}
	// Events of about a page each, so every commit writes a dozen pages:
	// the WAL passes twice the bound in a few thousand commits.
	msg := strings.Repeat("m", 3500)
	const pageSize = 4096
	bound := int64(sqlstore.WALBoundPagesForTest) * (pageSize + 24)
	at := time.Now().UTC().Truncate(time.Microsecond)
	var largest int64
	for i := 0; i*10 < 2*sqlstore.WALBoundPagesForTest; i++ {
		events := make([]beet.Event, 8)
		for j := range events {
			n := i*len(events) + j
			events[j] = beet.Event{ID: beet.EventID{byte(n), byte(n >> 8), byte(n >> 16), 0x77}, Token: toks[j],
				ReceivedAt: at.Add(time.Duration(n) * time.Millisecond), Method: "POST", Kind: beet.KindLog, Message: msg}
		}
		if err := db.AddEvents(ctx, events, nil); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(path + "-wal"); err == nil {
			largest = max(largest, st.Size())
		}
	}
	// The commits after the one that passes the bound, until the WAL
	// restarts, take it a little past it.
	if limit := bound * 11 / 10; largest > limit {
		t.Fatalf("the WAL grew to %d bytes, past the bound of %d pages (%d bytes)", largest, sqlstore.WALBoundPagesForTest, limit)
	}
	if largest < bound/2 {
		t.Fatalf("the WAL reached only %d bytes: the test wrote too little to reach the bound (%d)", largest, bound)
	}
}

// newAutoBeets creates an account (its user's address email) with n new
// beets in auto mode.
func newAutoBeets(t *testing.T, db *sqlstore.DB, email string, n int) []*beet.Beet {
	t.Helper()
	ctx := context.Background()
	acct := &beet.Account{Plan: beet.PlanFree, CreatedAt: time.Now()}
	if err := db.CreateAccount(ctx, acct, &beet.User{Email: email, PasswordHash: "-", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	bs := make([]*beet.Beet, n)
	for i := range bs {
		bs[i] = &beet.Beet{AccountID: acct.ID, Name: "n", Token: beet.NewToken(), Status: beet.StatusNew, Timezone: "UTC",
			Detection: beet.Detection{Mode: beet.ModeAuto}, CreatedAt: time.Now()}
		if err := db.CreateBeet(ctx, bs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return bs
}
