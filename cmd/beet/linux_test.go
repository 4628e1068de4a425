package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/sqlstore"
)

// openPTY opens a pseudo-terminal: what a person types goes into master,
// and the command reads it from the terminal tty.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Skipf("unlockpt: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Skipf("ptsname: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the terminal: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// On a terminal, set-password asks twice without echo: two different
// answers change nothing; the same twice sets it.
func TestSetPasswordPrompt(t *testing.T) {
	e := newTestEnv(t)
	e.createAccount("ada@example.com", "free")
	prompt := func(typed string) (int, string, string) {
		master, tty := openPTY(t)
		if _, err := master.WriteString(typed); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"accounts", "set-password", "--email", "ada@example.com"}, e.getenv, tty, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	code, out, errOut := prompt("first password\nother password\n")
	if code != 1 || out != "" || !strings.Contains(errOut, "New password: ") || !strings.Contains(errOut, "Again: ") ||
		!strings.Contains(errOut, "the two passwords differ; nothing was changed") {
		t.Fatalf("two different answers: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = prompt("typed at the prompt\ntyped at the prompt\n")
	if code != 0 || !strings.Contains(out, `"password_changed":true`) || strings.Contains(errOut, "typed at the prompt") {
		t.Fatalf("the same answer twice: exit %d, stdout %q, stderr %q (the password must not be echoed)", code, out, errOut)
	}
	db, err := sqlstore.Open(context.Background(), e.dbURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := service.New(db, service.Options{}).Authenticate(context.Background(), "ada@example.com", "typed at the prompt"); err != nil {
		t.Fatalf("the password typed at the prompt does not sign in: %v", err)
	}
}

// A database file the command's user may not write gives one line naming
// the file and saying why. Running as another user needs root (which can
// read anything itself), so the test runs the built binary as nobody.
func TestDatabasePermissionDeniedOneLine(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run the binary as another user")
	}
	if testing.Short() {
		t.Skip("builds the binary; skipped in -short")
	}
	bin, err := buildBeet()
	if err != nil {
		t.Fatal(err)
	}
	// A world-readable directory with a copy of the binary and a database
	// only root may open.
	dir, err := os.MkdirTemp("", "beet-perm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	copyBin := filepath.Join(dir, "beet")
	if err := os.WriteFile(copyBin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "beet.db")
	e := &testEnv{t: t, dbURL: "sqlite://" + db}
	e.mustRun(nil, "migrate")
	os.Chmod(db, 0o600)

	cmd := exec.Command(copyBin, "accounts", "list")
	cmd.Env = []string{"BEET_DATABASE_URL=sqlite://" + db, "HOME=" + dir}
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	want := "cannot read and write the database file " + db + ": permission denied"
	if code := cmd.ProcessState.ExitCode(); code != 1 || stdout.Len() != 0 || !strings.Contains(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 1 {
		t.Fatalf("accounts list as nobody on root's 0600 database: exit %d (%v), stdout %q, stderr %q; want 1 and one line saying %q", code, err, stdout.String(), stderr.String(), want)
	}
}
