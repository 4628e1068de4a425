package notify_test

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/notify"
	"github.com/beethq/beet/internal/testdb"
)

// TestTwoWorkersOneOutbox: two workers on two connections pools (two
// instances) drain one outbox of 300 messages at once; the receiver sees
// every message exactly once. On PostgreSQL this exercises FOR UPDATE
// SKIP LOCKED; on SQLite, two writers on one file.
func TestTwoWorkersOneOutbox(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		const n = 300
		url := testdb.URL(t, engine)
		db1, db2 := testdb.Open(t, url), testdb.Open(t, url)
		r := &rig{t: t, db: db1}
		a, _, err := newSvc(db1).CreateAccount(context.Background(), "race@example.com", "password1", beet.PlanFree)
		if err != nil {
			t.Fatal(err)
		}
		r.acct = a
		rc := newReceiver(t)
		ch := r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: rc.URL})
		for range n {
			if err := db1.CreateDelivery(context.Background(), &beet.Delivery{ChannelID: ch.ID, Event: beet.EventTest}); err != nil {
				t.Fatal(err)
			}
		}
		sender := notify.NewSender(notify.SenderOptions{AllowPrivate: true})
		var wg sync.WaitGroup
		claimed := make([]int, 2)
		for i, db := range []notify.Store{db1, db2} {
			w := &notify.Worker{Store: db, Sender: sender, Batch: 8}
			wg.Go(func() {
				deadline := time.Now().Add(30 * time.Second)
				for time.Now().Before(deadline) {
					k, err := w.Once(context.Background())
					if err != nil {
						t.Errorf("worker %d: %v", i, err)
						return
					}
					claimed[i] += k
					if k == 0 {
						return
					}
				}
			})
		}
		wg.Wait()
		seen := map[string]int{}
		for _, req := range rc.requests() {
			seen[req.Header.Get("Idempotency-Key")]++
		}
		dups := 0
		for _, c := range seen {
			if c > 1 {
				dups++
			}
		}
		t.Logf("%s: worker 1 sent %d, worker 2 sent %d; receiver got %d requests, %d distinct, %d duplicated",
			engine, claimed[0], claimed[1], len(rc.requests()), len(seen), dups)
		if len(seen) != n || dups != 0 || len(rc.requests()) != n {
			t.Fatalf("want %d messages exactly once", n)
		}
		if claimed[0] == 0 || claimed[1] == 0 {
			t.Logf("note: one worker did all the work (%v); the race was not exercised this run", claimed)
		}
		ds, _ := db1.FindDeliveries(context.Background(), ch.ID, 1000)
		for _, d := range ds {
			if d.Status != beet.DeliveryDelivered || d.Attempts != 1 {
				t.Fatalf("delivery %+v", d)
			}
		}
	})
}

// TestWorkerKilledMidSend: a worker process claims a delivery and is
// killed (SIGKILL) while its request is at the receiver, before it can
// record anything. When the lease ends, another worker sends it again,
// with the same idempotency key: delivery is at least once, never lost.
func TestWorkerKilledMidSend(t *testing.T) {
	if os.Getenv("BEET_NOTIFY_CHILD_DB") != "" {
		return // the child runs in TestHelperWorkerProcess
	}
	testdb.Each(t, func(t *testing.T, engine string) {
		url := testdb.URL(t, engine)
		db := testdb.Open(t, url)
		r := &rig{t: t, db: db}
		a, _, err := newSvc(db).CreateAccount(context.Background(), "kill@example.com", "password1", beet.PlanFree)
		if err != nil {
			t.Fatal(err)
		}
		r.acct = a
		arrived := make(chan struct{}, 4)
		release := make(chan struct{})
		rc := newReceiver(t)
		rc.set(func(rc *receiver) {
			rc.onRecv = func(n int) {
				arrived <- struct{}{}
				if n == 1 {
					<-release // hold the first request until the sender is dead
				}
			}
		})
		defer close(release)
		ch := r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: rc.URL})
		d := &beet.Delivery{ChannelID: ch.ID, Event: beet.EventTest}
		if err := db.CreateDelivery(context.Background(), d); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWorkerProcess$")
		cmd.Env = append(os.Environ(), "BEET_NOTIFY_CHILD_DB="+url)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-arrived:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Fatal("the child worker never sent")
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		got, _ := db.FindDeliveryByID(context.Background(), d.ID)
		if got.Status != beet.DeliveryPending || got.Attempts != 1 || got.LastAt != nil {
			t.Fatalf("after the kill: %+v; want pending, attempt 1, nothing recorded", got)
		}
		// Right away nothing is due: the dead worker's lease holds.
		w := &notify.Worker{Store: db, Sender: notify.NewSender(notify.SenderOptions{AllowPrivate: true})}
		if n, _ := w.Once(context.Background()); n != 0 {
			t.Fatalf("claimed %d deliveries under a live lease", n)
		}
		w.Now = func() time.Time { return time.Now().Add(childLease) }
		if n, err := w.Once(context.Background()); err != nil || n != 1 {
			t.Fatalf("after the lease: claimed %d, %v", n, err)
		}
		got, _ = db.FindDeliveryByID(context.Background(), d.ID)
		reqs := rc.requests()
		if got.Status != beet.DeliveryDelivered || got.Attempts != 2 || len(reqs) != 2 ||
			reqs[0].Header.Get("Idempotency-Key") != reqs[1].Header.Get("Idempotency-Key") {
			t.Fatalf("after the retry: %+v, %d requests", got, len(reqs))
		}
	})
}

const childLease = 2 * time.Second

// TestHelperWorkerProcess is the worker the test above kills.
func TestHelperWorkerProcess(t *testing.T) {
	url := os.Getenv("BEET_NOTIFY_CHILD_DB")
	if url == "" {
		t.Skip("runs only as the child of TestWorkerKilledMidSend")
	}
	db := testdb.Open(t, url)
	w := &notify.Worker{Store: db, Sender: notify.NewSender(notify.SenderOptions{AllowPrivate: true}), Lease: childLease}
	w.Once(context.Background()) // blocks at the receiver until killed
	os.Exit(0)
}
