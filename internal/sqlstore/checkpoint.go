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

// checkpointer copies committed pages from the SQLite WAL into the database
// file, on a connection of its own and in PASSIVE mode (it waits for no
// reader or writer and holds neither back). Left to itself, SQLite does
// this inside the commit that takes the WAL past 1,000 pages: that commit
// copies them all and fsyncs the database file, and every request waiting
// on it waits that long too (the p99). With the checkpointer, that commit
// finds the pages copied already and only restarts the WAL, which only a
// writer can do, so the WAL stays small under a steady stream of commits.
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
		var busy, frames, copied int
		err := c.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied)
		cancel()
		switch {
		case err != nil && !failing:
			c.log.Warn("WAL checkpoint failed; retrying every second", "err", err)
		case err == nil && failing:
			c.log.Info("WAL checkpoint works again", "frames", frames)
		}
		failing = err != nil
	}
}

// close stops the checkpointer. The last connection to close checkpoints
// what is left.
func (c *checkpointer) close() error {
	c.stopOnce.Do(func() { close(c.stop) })
	<-c.done
	return c.db.Close()
}
