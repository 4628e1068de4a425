package sqlstore

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
)

// errSyncFailed marks every event write after a failed fsync of the WAL.
var errSyncFailed = errors.New("an fsync of the SQLite WAL failed earlier; event writes are refused until Beet restarts")

// walSync makes ingestion commits durable after they return. They are
// committed with synchronous=NORMAL, so COMMIT writes the WAL's frames but
// does not fsync them; sync then fsyncs the WAL file through a descriptor
// of its own. On Linux an fsync flushes the file's inode, whichever
// descriptor it is called on, so every frame written before sync began is
// on disk when it returns: a commit that returned before that is durable.
// docs/OPERATIONS.md ("SQLite: the WAL's fsync beside the next commit")
// has the whole argument.
type walSync struct {
	path string
	mu   sync.Mutex // one fsync at a time; guards f
	f    *os.File
	// err is the first failed fsync. It stays: after a failed fsync Linux
	// may have dropped the dirty pages and a later fsync can succeed
	// without them, so no later commit could be called durable. Atomic,
	// so that a commit checking it does not wait behind a running fsync
	// (which holds mu), the very wait the overlap is for.
	err atomic.Pointer[error]
	// beforeSync, if set, runs before each fsync; an error it returns is
	// taken as the fsync's (tests).
	beforeSync func() error
}

// newWALSync returns the syncer of the database file at path, or nil
// where the overlap is not offered (see datasync).
func newWALSync(path string) *walSync {
	if !canDatasync {
		return nil
	}
	return &walSync{path: path + "-wal"}
}

// sync fsyncs the WAL. Every commit that returned before sync was called
// is durable when it returns nil.
func (s *walSync) sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failed(); err != nil {
		return err
	}
	var err error
	if s.beforeSync != nil {
		err = s.beforeSync()
	}
	var f *os.File
	if err == nil {
		f, err = s.file()
	}
	if err == nil {
		err = datasync(f)
	}
	if err != nil {
		err = fmt.Errorf("%w: fsync %s: %w", errSyncFailed, s.path, err)
		s.err.Store(&err)
		return err
	}
	return nil
}

// failed returns the sticky error of a failed fsync, or nil.
func (s *walSync) failed() error {
	if p := s.err.Load(); p != nil {
		return *p
	}
	return nil
}

// file returns the descriptor of the WAL, opening it again if the file at
// the path is no longer the one held. SQLite deletes the WAL when its last
// connection closes (Beet keeps the writer's open) and creates a new one
// on the next open; the deleted file's frames were checkpointed into the
// database file, and synced, before it went.
func (s *walSync) file() (*os.File, error) {
	if s.f != nil {
		held, err1 := s.f.Stat()
		now, err2 := os.Stat(s.path)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return s.f, nil
		}
		s.f.Close()
		s.f = nil
	}
	// Read-only: fsync needs no write access on Linux, and Beet never
	// writes the WAL itself.
	f, err := os.Open(s.path)
	if err != nil {
		return nil, err
	}
	s.f = f
	return f, nil
}

func (s *walSync) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}
