package sqlstore

import (
	"os"
	"syscall"
)

// canDatasync: on Linux fsync and fdatasync write back every dirty page
// of the inode, whichever descriptor they are called on.
const canDatasync = true

// datasync flushes f's data and the metadata needed to read it (its size,
// as the WAL grows), as SQLite's own WAL sync does.
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
