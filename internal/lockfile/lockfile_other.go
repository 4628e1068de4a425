//go:build !unix

package lockfile

import "fmt"

// Lock is a no-op where flock(2) is missing (Windows): the one-instance
// guard is a Unix feature; SQLite's own locking still keeps the file whole.
type Lock struct{}

// HeldError says that another process holds the lock.
type HeldError struct {
	Path string
	PID  int
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("%s is locked by another process (pid %d)", e.Path, e.PID)
}

// Acquire does nothing on this platform.
func Acquire(path string) (*Lock, error) { return &Lock{}, nil }

// Release does nothing on this platform.
func (l *Lock) Release() error { return nil }
