//go:build unix

// Package lockfile holds an exclusive lock on a file for the life of a
// process, so that two `beet serve` never share one SQLite database or one
// spool. It uses flock(2): the kernel drops the lock when the process dies,
// even by SIGKILL, so a crash never leaves a stale lock behind. The file
// holds the owner's PID, so the refusal can name it.
package lockfile

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Lock is a held lock; Release lets it go.
type Lock struct {
	f *os.File
}

// HeldError says that another process holds the lock.
type HeldError struct {
	Path string
	PID  int // 0 when the file does not say
}

func (e *HeldError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("%s is locked by another process (pid %d)", e.Path, e.PID)
	}
	return fmt.Sprintf("%s is locked by another process", e.Path)
}

// Acquire takes the lock on path, creating the file, without waiting: if
// another process holds it, it returns a *HeldError at once.
func Acquire(path string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b := make([]byte, 32)
			n, _ := f.ReadAt(b, 0)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
			return nil, &HeldError{Path: path, PID: pid}
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// Release unlocks and closes the file. The file stays: removing it would
// race with a process that has just opened it.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := l.f.Close() // closing the descriptor drops the flock
	l.f = nil
	return err
}
