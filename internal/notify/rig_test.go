package notify_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/notify"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/sqlstore"
	"github.com/beethq/beet/internal/testdb"
)

// request is one request a receiver got.
type request struct {
	Header http.Header
	Body   []byte
	At     time.Time
	URI    string // path and query, as sent
}

// receiver is a real HTTP server on loopback that records what it gets and
// answers with the statuses of respond in turn (200 once they run out).
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	got     []request
	respond []int
	header  http.Header // added to non-2xx answers
	onRecv  func(n int)
}

func newReceiver(t *testing.T, respond ...int) *receiver {
	rc := &receiver{respond: respond, header: http.Header{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		rc.mu.Lock()
		rc.got = append(rc.got, request{r.Header.Clone(), body, time.Now(), r.RequestURI})
		n := len(rc.got)
		status := 200
		if n <= len(rc.respond) {
			status = rc.respond[n-1]
		}
		hook := rc.onRecv
		header := rc.header.Clone()
		rc.mu.Unlock()
		if hook != nil {
			hook(n)
		}
		if r.Method != http.MethodPost {
			status = 405
		}
		if status >= 300 {
			for k, v := range header {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(status)
		io.WriteString(w, http.StatusText(status))
	}))
	t.Cleanup(rc.Close)
	return rc
}

// set changes the receiver's behaviour while it serves.
func (rc *receiver) set(fn func(rc *receiver)) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	fn(rc)
}

func (rc *receiver) requests() []request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]request(nil), rc.got...)
}

// rig is a store with an account, a beet and helpers to flip it.
type rig struct {
	t    *testing.T
	db   *sqlstore.DB
	svc  *service.Service
	acct *beet.Account
	beet *beet.Beet
}

func newRig(t *testing.T, engine string) *rig {
	t.Helper()
	return newRigOn(t, testdb.New(t, engine))
}

// newRigOn is newRig on an open database.
func newRigOn(t *testing.T, db *sqlstore.DB) *rig {
	t.Helper()
	svc := newSvc(db)
	a, _, err := svc.CreateAccount(context.Background(), "n@example.com", "password1", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	b, err := svc.CreateBeet(context.Background(), a.ID, service.BeetInput{Name: "Checkout succeeded", Timezone: "Europe/Riga",
		Detection: &beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 60, GraceSeconds: 30}})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, db: db, svc: svc, acct: a, beet: b}
	r.flip(beet.StatusNew, beet.StatusUp, beet.FlipFirst, "First event received.")
	return r
}

func (r *rig) channel(kind beet.ChannelKind, cfg beet.ChannelConfig) *beet.Channel {
	r.t.Helper()
	c := &beet.Channel{AccountID: r.acct.ID, Kind: kind, Name: string(kind) + " channel", Config: cfg}
	if err := r.db.CreateChannel(context.Background(), c); err != nil {
		r.t.Fatal(err)
	}
	return c
}

// flip changes the beet's status now, through the store as detection does.
func (r *rig) flip(from, to beet.Status, kind beet.FlipKind, reason string) *beet.Flip {
	r.t.Helper()
	return r.flipAt(time.Now(), from, to, kind, reason)
}

func (r *rig) flipAt(at time.Time, from, to beet.Status, kind beet.FlipKind, reason string) *beet.Flip {
	r.t.Helper()
	f := &beet.Flip{BeetID: r.beet.ID, At: at, From: from, To: to, Kind: kind, Reason: reason}
	if kind == beet.FlipSilence {
		f.Observed, f.Expected = ptr(0.0), ptr(1.0)
	}
	if err := r.db.SetBeetStatus(context.Background(), f); err != nil {
		r.t.Fatal(err)
	}
	return f
}

func (r *rig) down() *beet.Flip {
	return r.flip(beet.StatusUp, beet.StatusDown, beet.FlipSilence, "No event for 2 min; expected one at least every 1 min (grace 30s)")
}

func (r *rig) up() *beet.Flip {
	return r.flip(beet.StatusDown, beet.StatusUp, beet.FlipRecovery, "Events are back")
}

func (r *rig) worker(opts ...func(*notify.Worker)) *notify.Worker {
	w := &notify.Worker{
		Store:       r.db,
		Sender:      notify.NewSender(notify.SenderOptions{AllowPrivate: true, BaseURL: "https://beet.example.com"}),
		Maintenance: r.svc,
		BaseURL:     "https://beet.example.com",
		BackoffBase: 10 * time.Millisecond,
		BackoffMax:  40 * time.Millisecond,
	}
	for _, o := range opts {
		o(w)
	}
	return w
}

// drain runs the worker until no delivery of ch is pending, or fails.
func (r *rig) drain(w *notify.Worker, ch *beet.Channel) []*beet.Delivery {
	r.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := w.Once(context.Background()); err != nil {
			r.t.Fatal(err)
		}
		ds, err := r.db.FindDeliveries(context.Background(), ch.ID, 0)
		if err != nil {
			r.t.Fatal(err)
		}
		pending := false
		for _, d := range ds {
			pending = pending || d.Status == beet.DeliveryPending
		}
		if !pending {
			return ds
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("deliveries still pending after 10 s: %+v", ds[0])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func newSvc(db *sqlstore.DB) *service.Service {
	return service.New(db, service.Options{PasswordParams: &service.PasswordParams{Time: 1, Memory: 64, Threads: 1}})
}

func ptr(f float64) *float64 { return &f }

func decodeStrict(t *testing.T, body []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytesReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("payload does not match the documented format: %v\n%s", err, body)
	}
}
