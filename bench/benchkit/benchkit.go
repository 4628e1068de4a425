// Package benchkit holds what the load programs under bench/ share: a
// throw-away PostgreSQL schema per run and reading a process's memory.
package benchkit

import (
	"database/sql"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver for database/sql
)

// PGSchema creates a schema named prefix plus a unique suffix on the
// server at base and returns base with search_path set to it, and a
// function that drops it.
func PGSchema(base, prefix string) (string, func()) {
	admin, err := sql.Open("pgx", base)
	if err != nil {
		log.Fatal(err)
	}
	schema := prefix + strconv.FormatInt(time.Now().UnixNano(), 36)
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		log.Fatal(err)
	}
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema, func() {
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	}
}

// RSS is a process's resident memory in KiB (0 if unknown).
func RSS(pid int) int64 { return procStatus(pid, "VmRSS:") }

// HWM is a process's peak resident memory in KiB (0 if unknown).
func HWM(pid int) int64 { return procStatus(pid, "VmHWM:") }

// procStatus reads a KiB field of /proc/PID/status.
func procStatus(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
