package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
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
