package sqlstore

import (
	"context"
	"database/sql"
	"log/slog"
	"sync"
	"time"
)

// checkpointEvery is how often the checkpointer copies the SQLite WAL into
// the database file.
const checkpointEvery = 500 * time.Millisecond

// walBoundPages is the WAL's size, in pages, past which the writer's
// commit checkpoints it itself (SQLite's wal_autocheckpoint, set to its
// default): 4 MB with 4 KiB pages.
//
// sqltail14 raised it to 10,000 (40 MB) with the checkpointer every
// 100 ms, so that fewer commits carry a checkpoint; side by side on the
// quiet machine that lost (ladder 7,750 against 9,500 req/s, p99 at 5,000
// req/s 8.5 against 6.1 ms), and the 100 ms alone tied, so both stay as
// they were (docs/BENCHMARKS.md, "Why it is built this way").
const walBoundPages = 1000

// checkpointer copies committed pages from the SQLite WAL into the database
// file, on a connection of its own and in PASSIVE mode (it waits for no
// reader or writer and holds neither back).
//
// Only a writer can restart the WAL (write it again from the start), and
// only once every frame in it is copied; under a steady stream of commits
// one nearly always lands during a passive checkpoint, so the WAL is
// rarely wholly copied when the next commit begins, and it grows until
// the writer's own checkpoint, which runs inside a commit, copies the rest
// and lets the next commit restart it. With the checkpointer, that commit
// finds most pages copied already. The WAL stays bounded (a little over
// walBoundPages) and is overwritten from the start after each restart.
type checkpointer struct {
	db       *sql.DB
	log      *slog.Logger
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

func startCheckpointer(path string, log *slog.Logger) (*checkpointer, error) {
	// A checkpoint syncs the WAL before it copies frames into the database
	// file, and that file after, unless its connection has synchronous=OFF:
	// AddEventsUnsynced's durability rests on it, so it is set here.
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(1000)&_pragma=synchronous(FULL)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxIdleTime(0)
	c := &checkpointer{db: db, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c, nil
}

func (c *checkpointer) run() {
	defer close(c.done)
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, frames, err := walCheckpoint(ctx, c.db, "PASSIVE")
		cancel()
		switch {
		case err != nil && !failing:
			c.log.Warn("WAL checkpoint failed; retrying", "err", err)
		case err == nil && failing:
			c.log.Info("WAL checkpoint works again", "frames", frames)
		}
		failing = err != nil
	}
}

// walCheckpoint runs PRAGMA wal_checkpoint(mode) on q (a *sql.DB or a
// *sql.Conn) and returns its result row: busy when another connection held
// the checkpoint lock (SQLite says so in the row, not as an error), and
// how many WAL frames there were.
func walCheckpoint(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, mode string) (busy bool, frames int, err error) {
	var b, copied int
	err = q.QueryRowContext(ctx, "PRAGMA wal_checkpoint("+mode+")").Scan(&b, &frames, &copied)
	return b != 0, frames, err
}

// close stops the checkpointer. The last connection to close checkpoints
// what is left.
func (c *checkpointer) close() error {
	c.stopOnce.Do(func() { close(c.stop) })
	<-c.done
	return c.db.Close()
}
