package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/sqlstore"
)

// `accounts create -h` shows its own flags first, apart from the
// configuration flags every command takes.
func TestHelpListsOwnFlagsFirst(t *testing.T) {
	e := newTestEnv(t)
	code, out, _ := e.run("accounts", "create", "-h")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	own, shared, ok := strings.Cut(out, "configuration (every command")
	if !ok {
		t.Fatalf("no configuration section:\n%s", out)
	}
	for _, f := range []string{"-email", "-password", "-plan"} {
		if !strings.Contains(own, f) {
			t.Errorf("%s is not among the command's own flags:\n%s", f, own)
		}
	}
	if strings.Contains(own, "-database-url") || !strings.Contains(shared, "-database-url") {
		t.Errorf("configuration flags mixed with the command's own:\n%s", out)
	}
}

// A one-off command pointed at a SQLite file that does not exist says
// which file (its absolute path) and creates nothing, accounts create
// included; migrate creates it.
func TestMissingDatabaseNotCreated(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	e := &testEnv{t: t, dbURL: "sqlite://data/beet.db"}
	os.Mkdir("data", 0o755)
	abs := filepath.Join(dir, "data", "beet.db")
	e.input = "a new password\n"
	for _, args := range [][]string{
		{"accounts", "list"},
		{"accounts", "create", "--email", "ada@example.com", "--password", "correct horse battery staple"},
		{"accounts", "set-password", "--email", "ada@example.com"},
		{"accounts", "remove-user", "--email", "ada@example.com"},
		{"apikeys", "create", "--account", "1"},
		{"cleanup", "--dry-run"},
	} {
		code, out, errOut := e.run(args...)
		if code != 1 || out != "" || !strings.Contains(errOut, "no database at "+abs+":") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%s on a missing file: exit %d, stdout %q, stderr %q; want 1 and one line naming %s", strings.Join(args, " "), code, out, errOut, abs)
		}
		if _, err := os.Stat(abs); !os.IsNotExist(err) {
			t.Fatalf("%s created %s", strings.Join(args, " "), abs)
		}
	}
	var m map[string]string
	e.mustRun(&m, "migrate")
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("migrate did not create %s: %v", abs, err)
	}
	if m["created"] != abs {
		t.Errorf("migrate printed %v; want it to name the file it created, %s", m, abs)
	}
	m = nil
	e.mustRun(&m, "migrate")
	if _, ok := m["created"]; ok {
		t.Errorf("a second migrate says it created the file: %v", m)
	}
	e.mustRun(nil, "accounts", "list")

	// The file exists, but the URL has a query string: every command
	// refuses it as migrate does, saying why, not that the file (with
	// "?mode=ro" in its name) is missing.
	e.dbURL = "sqlite://data/beet.db?mode=ro"
	for _, args := range [][]string{{"accounts", "list"}, {"cleanup", "--dry-run"}, {"migrate"}} {
		code, out, errOut := e.run(args...)
		if code != 1 || out != "" || !strings.Contains(errOut, `query parameters are not supported`) || strings.Contains(errOut, "no database at") ||
			strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%s with ?mode=ro: exit %d, stdout %q, stderr %q; want 1 and one line saying query parameters are not supported", strings.Join(args, " "), code, out, errOut)
		}
	}
}

// A database file that cannot be used gives one line that names the file
// and says what is wrong with it.
func TestUnusableDatabaseOneLine(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	os.WriteFile(garbage, []byte(strings.Repeat("not a database at all ", 20)), 0o644)
	folder := filepath.Join(dir, "folder.db")
	os.Mkdir(folder, 0o755)
	for _, c := range []struct{ path, says string }{
		{garbage, "is not an SQLite database"},
		{folder, "is a directory, not a database file"},
	} {
		e := &testEnv{t: t, dbURL: "sqlite://" + c.path}
		code, out, errOut := e.run("accounts", "list")
		if code != 1 || out != "" || !strings.Contains(errOut, c.path+" "+c.says) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr %q; want one line naming the file and %q", c.path, code, errOut, c.says)
		}
	}
}

// set-password reads the password from stdin (never a flag), signs the
// user in with it and out everywhere else.
func TestSetPassword(t *testing.T) {
	e := newTestEnv(t)
	e.createAccount("ada@example.com", "free")
	if code, _, errOut := e.run("accounts", "set-password", "--email", "ada@example.com", "--password", "x"); code != 2 || !strings.Contains(errOut, "-password") {
		t.Fatalf("--password is accepted as a flag: exit %d %q", code, errOut)
	}
	e.input = ""
	if code, _, errOut := e.run("accounts", "set-password", "--email", "ada@example.com"); code != 2 || !strings.Contains(errOut, "no password on stdin") {
		t.Fatalf("empty stdin: exit %d %q", code, errOut)
	}
	e.input = "short\n"
	if code, _, errOut := e.run("accounts", "set-password", "--email", "ada@example.com"); code != 1 || !strings.Contains(errOut, "at least 8") {
		t.Fatalf("short password: exit %d %q", code, errOut)
	}
	e.input = "a new password\n"
	if code, _, errOut := e.run("accounts", "set-password", "--email", "nobody@example.com"); code != 1 || !strings.Contains(errOut, "no user has the email nobody@example.com") {
		t.Fatalf("unknown email: exit %d %q", code, errOut)
	}
	var got struct {
		Changed bool `json:"password_changed"`
	}
	e.mustRun(&got, "accounts", "set-password", "--email", "ADA@example.com")
	if !got.Changed {
		t.Fatal("not changed")
	}
	db, err := sqlstore.Open(context.Background(), e.dbURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc := service.New(db, service.Options{})
	if _, err := svc.Authenticate(context.Background(), "ada@example.com", "a new password"); err != nil {
		t.Fatalf("the new password does not sign in: %v", err)
	}
	if _, err := svc.Authenticate(context.Background(), "ada@example.com", "correct horse battery staple"); err == nil {
		t.Fatal("the old password still signs in")
	}
}

// remove-user removes a user and signs them out at once; the account's
// last user stays; each refusal is one line and a non-zero exit.
func TestRemoveUser(t *testing.T) {
	e := newTestEnv(t)
	accountID := e.createAccount("ada@example.com", "free")
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, e.dbURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc := service.New(db, service.Options{})
	if _, err := svc.AddUser(ctx, accountID, "bob@example.com", "bobs password"); err != nil {
		t.Fatal(err)
	}
	bob, err := svc.SignIn(ctx, "bob@example.com", "bobs password", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ada, err := svc.SignIn(ctx, "ada@example.com", "correct horse battery staple", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}

	if code, _, errOut := e.run("accounts", "remove-user"); code != 2 || !strings.Contains(errOut, "--email is required") {
		t.Errorf("no --email: exit %d %q", code, errOut)
	}
	code, out, errOut := e.run("accounts", "remove-user", "--email", "nobody@example.com")
	if code != 1 || out != "" || !strings.Contains(errOut, "no user has the email nobody@example.com") {
		t.Errorf("unknown email: exit %d %q %q", code, out, errOut)
	}
	oneLineOn(t, errOut)

	var got struct {
		UserID    int64 `json:"user_id"`
		AccountID int64 `json:"account_id"`
		Removed   bool  `json:"removed"`
	}
	e.mustRun(&got, "accounts", "remove-user", "--email", "BOB@example.com")
	if !got.Removed || got.AccountID != accountID || got.UserID != bob.Session.UserID {
		t.Fatalf("remove-user printed %+v", got)
	}
	if _, err := svc.SessionFor(ctx, bob.Cookie); beet.ErrorCode(err) != beet.EUNAUTHORIZED {
		t.Errorf("bob's session after removal: %v; want not signed in", err)
	}
	if _, err := svc.SignIn(ctx, "bob@example.com", "bobs password", "127.0.0.2"); err == nil {
		t.Error("bob still signs in")
	}
	if _, err := svc.SessionFor(ctx, ada.Cookie); err != nil {
		t.Errorf("ada's session after bob's removal: %v", err)
	}

	code, out, errOut = e.run("accounts", "remove-user", "--email", "ada@example.com")
	if code != 1 || out != "" || !strings.Contains(errOut, "ada@example.com is the only user of their account") {
		t.Errorf("the last user: exit %d %q %q", code, out, errOut)
	}
	oneLineOn(t, errOut)
	if _, err := svc.SessionFor(ctx, ada.Cookie); err != nil {
		t.Errorf("ada's session after the refused removal: %v", err)
	}
}
