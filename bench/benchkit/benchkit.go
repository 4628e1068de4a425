// Package benchkit holds what the load programs under bench/ share: building
// the binaries they run, opening the database they check, a throw-away
// PostgreSQL schema per run, reading a process's memory and its own CPU time.
package benchkit

import (
	"database/sql"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver for database/sql
)

// Build compiles the Go package pkg into dir/name and returns its path.
func Build(dir, name, pkg string) string {
	bin := filepath.Join(dir, name)
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		log.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// OpenDB opens the database a Beet store URL names through database/sql,
// bypassing Beet, to count what it stored. sqliteQuery is the SQLite file
// URI's query ("mode=ro", "_pragma=busy_timeout(10000)"); the program
// imports the SQLite driver.
func OpenDB(url, sqliteQuery string) *sql.DB {
	var db *sql.DB
	var err error
	if path, ok := strings.CutPrefix(url, "sqlite://"); ok {
		db, err = sql.Open("sqlite", "file:"+path+"?"+sqliteQuery)
	} else {
		db, err = sql.Open("pgx", url)
	}
	if err != nil {
		log.Fatal(err)
	}
	return db
}

// Stop interrupts cmd (a graceful shutdown) and kills it if it has not
// exited within 20 s.
func Stop(cmd *exec.Cmd) {
	cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
	}
}

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

// SelfCPU is the CPU time (user and system) this process has used, 0 if
// the system cannot say: a load program shares the machine with what it
// measures, so its own share is part of the result.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
