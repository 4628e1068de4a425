//go:build !linux

package sqlstore

import (
	"errors"
	"os"
)

// canDatasync: elsewhere whether an fsync through another descriptor
// flushes SQLite's writes is not checked, so SQLite keeps its own fsync in
// each commit (synchronous=FULL).
const canDatasync = false

func datasync(*os.File) error { return errors.New("not supported") }
