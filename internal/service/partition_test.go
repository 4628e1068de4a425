package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testdb"
)

// TestCleanupDropsOldPartitions: events older than the longest retention
// go with their whole month on PostgreSQL (the report counts the dropped
// partition) and row by row on SQLite; younger events stay on both.
func TestCleanupDropsOldPartitions(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		st := testdb.Open(t, testdb.URL(t, engine))
		svc := service.New(st, service.Options{CleanupBatch: 100, PasswordParams: cheapHash})
		a, _, err := svc.CreateAccount(ctx, "old@example.com", "password1", beet.PlanEnterprise)
		if err != nil {
			t.Fatal(err)
		}
		b, err := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: "b"})
		if err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		old := time.Date(now.Year()-4, now.Month(), 15, 12, 0, 0, 0, time.UTC) // both old events in one month
		recent := now.AddDate(-2, 0, 0)
		var evs []beet.Event
		for i, at := range []time.Time{old, old.Add(time.Hour), recent} {
			ev := beet.Event{BeetID: b.ID, ReceivedAt: at, Method: "GET"}
			ev.ID[0], ev.ID[1] = 0xd0, byte(i)
			evs = append(evs, ev)
		}
		if err := st.AddEvents(ctx, evs, nil); err != nil {
			t.Fatal(err)
		}
		// The partition job gives the old rows (in the default partition) their month.
		if _, err := st.EnsureEventPartitions(ctx, now, 3); err != nil {
			t.Fatal(err)
		}
		rep, err := svc.Cleanup(ctx, now, false)
		if err != nil {
			t.Fatal(err)
		}
		wantDropped, wantDeleted := 1, int64(0)
		if engine == "sqlite" {
			wantDropped, wantDeleted = 0, 2
		}
		if rep.PartitionsDropped != wantDropped || rep.Total != wantDeleted {
			t.Errorf("Cleanup = %d partitions dropped, %d events deleted; want %d and %d", rep.PartitionsDropped, rep.Total, wantDropped, wantDeleted)
		}
		got, err := st.FindEvents(ctx, beet.EventFilter{BeetID: b.ID})
		if err != nil || len(got) != 1 || !got[0].ReceivedAt.Equal(recent.Truncate(time.Microsecond)) {
			t.Fatalf("after the clean-up the beet keeps %v (%v); want only the event of 2 years ago", got, err)
		}
	})
}
