package ingest

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/beethq/beet"
)

// problemQuiet is how long a problem of one kind on one beet stays a single
// problem: a burst of 429s, or a client sending a bad body every second,
// is noted once per quiet period, not once per request; and again every
// problemRenote while it goes on, so that the list shows it has not
// stopped (a client that sent a bad body every 4 s was noted only at its
// first, hours before) without filling the beet's 100 rows in minutes.
const (
	problemQuiet  = 10 * time.Second
	problemRenote = 10 * time.Minute
)

// maxProblemKeys bounds the recorder's memory under a flood.
const maxProblemKeys = 100_000

// problemRecorder notes ingestion problems on beets off the request path:
// requests queue them without waiting, and one goroutine writes them.
type problemRecorder struct {
	store beet.ProblemStore
	find  func(ctx context.Context, token string) (tokenEntry, error) // the handler's cached lookup
	log   *slog.Logger
	queue chan problemNote
	done  chan struct{}

	mu   sync.Mutex
	last map[problemKey]burst
}

// burst is when a burst of problems of one kind was last seen and noted.
type burst struct{ seen, noted time.Time }

// problemKey identifies a burst: by beet when known, else by token (rate
// limiting happens before the beet is looked up).
type problemKey struct {
	beetID int64
	token  string
	kind   beet.ProblemKind
}

type problemNote struct {
	key    problemKey
	at     time.Time
	detail string
}

func newProblemRecorder(store beet.ProblemStore, find func(context.Context, string) (tokenEntry, error), log *slog.Logger) *problemRecorder {
	p := &problemRecorder{store: store, find: find, log: log, queue: make(chan problemNote, 1024), done: make(chan struct{}), last: map[problemKey]burst{}}
	go p.run()
	return p
}

// note queues a problem unless the same burst was already noted. It never
// blocks: when the queue is full the note is dropped (the burst is already
// on record by then).
func (p *problemRecorder) note(key problemKey, at time.Time, detail string) {
	p.mu.Lock()
	b, seen := p.last[key]
	if !seen && len(p.last) >= maxProblemKeys {
		clear(p.last) // forget old bursts rather than grow
	}
	due := !seen || at.Sub(b.seen) >= problemQuiet || at.Sub(b.noted) >= problemRenote // a new burst, or one that goes on
	b.seen = at
	if due {
		b.noted = at
	}
	p.last[key] = b
	p.mu.Unlock()
	if !due {
		return
	}
	select {
	case p.queue <- problemNote{key, at, detail}:
	default:
	}
}

func (p *problemRecorder) run() {
	defer close(p.done)
	for n := range p.queue {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		p.write(ctx, n)
		cancel()
	}
}

func (p *problemRecorder) write(ctx context.Context, n problemNote) {
	beetID := n.key.beetID
	if beetID == 0 {
		ent, err := p.find(ctx, n.key.token)
		if err != nil || ent.beetID == 0 {
			return // unknown token, or the database is down: nothing to note it on
		}
		beetID = ent.beetID
	}
	pr := &beet.Problem{BeetID: beetID, At: n.at, Kind: n.key.kind, Detail: n.detail}
	if err := p.store.AddProblem(ctx, pr); err != nil {
		p.log.Warn("could not note an ingestion problem", "beet_id", beetID, "kind", n.key.kind, "err", err)
	}
}

// close writes the queued problems and stops.
func (p *problemRecorder) close() {
	close(p.queue)
	<-p.done
}
