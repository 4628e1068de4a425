package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/sqlstore"
)

// TestImportHealthchecks imports a read-write key's export (a simple
// check, a paused cron check, an OnCalendar one) and a read-only key's
// (the same simple check by its unique_key, a cron check with a tag Beet
// cannot take, an OnCalendar one), as a directory: one beet per check
// that maps, the check's UUID as its token where the export has it, the
// OnCalendar checks named and skipped; --dry-run writes nothing, and a
// second run creates nothing.
func TestImportHealthchecks(t *testing.T) {
	e := newTestEnv(t)
	acct := e.createAccount("hc@example.com", "free")
	dir := t.TempDir()
	for _, f := range []string{"rw.json", "ro.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "hcimport", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	beets := func() []*beet.Beet {
		t.Helper()
		ctx := context.Background()
		db, err := sqlstore.Open(ctx, e.dbURL, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		svc := service.New(db, service.Options{})
		bs, _, err := svc.Beets(ctx, acct, beet.BeetFilter{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.FillTags(ctx, bs...); err != nil {
			t.Fatal(err)
		}
		return bs
	}
	lines := func(out, prefix string) int {
		n := 0
		for l := range strings.Lines(out) {
			if strings.HasPrefix(l, prefix) {
				n++
			}
		}
		return n
	}

	out := e.mustRun(nil, "import", "healthchecks", "--account", itoa(acct), "--dry-run", dir)
	if lines(out, "create ") != 3 || lines(out, "skip ") != 2 || lines(out, "exists ") != 1 || len(beets()) != 0 {
		t.Fatalf("dry run printed\n%s\nand left %d beets; want 3 to create, 2 skipped, 1 repeated, none written", out, len(beets()))
	}

	out = e.mustRun(nil, "import", "healthchecks", dir, "--account", itoa(acct))
	t.Logf("import:\n%s", out)
	for _, want := range []string{
		`skip    "Copy media" (rw.json): its schedule "Mon-Fri *-*-* 0/4:00" is an OnCalendar expression`,
		`skip    "Hourly sync" (ro.json): its schedule "hourly" is an OnCalendar expression`,
		`exists  "Filesystem Backup" (ro.json): the same check is imported from rw.json`,
		`"Nightly report": tag "Prod:EU" left out`,
		"3 created, 0 imported before, 1 repeated in the export, 2 skipped, 0 failed.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out, "31365bce-8da9") {
		t.Error("the output shows a check's UUID (its token) whole")
	}
	got := map[string]*beet.Beet{}
	for _, b := range beets() {
		got[b.Name] = b
	}
	if len(got) != 3 {
		t.Fatalf("%d beets, want 3", len(got))
	}
	fs, db, nightly := got["Filesystem Backup"], got["Database Backup"], got["Nightly report"]
	if fs == nil || db == nil || nightly == nil {
		t.Fatalf("beets %v", got)
	}
	if fs.Token != "31365bce-8da9-4729-8ff3-aaa71d56b712" || fs.Description != "Runs incremental backup every hour" ||
		fs.Detection != (beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600, GraceSeconds: 600}) || !slices.Equal(fs.Tags, []string{"backup", "fs"}) {
		t.Errorf("simple check: %+v", fs)
	}
	if db.Token != "803f680d-e89b-492b-82ef-2be7b774a92d" || db.Status != beet.StatusPaused || db.Timezone != "Europe/Riga" ||
		db.Detection.Mode != beet.ModeCron || db.Detection.Cron != "15 5 * * *" || db.Detection.Timezone != "Europe/Riga" || db.Detection.GraceSeconds != 1200 {
		t.Errorf("paused cron check: %+v", db)
	}
	// Imported with their last pings (2020): the simple check is overdue,
	// so down; the paused one stays paused until its next ping (no
	// manual_resume).
	if lp := time.Date(2020, 3, 24, 14, 2, 3, 0, time.UTC); fs.Status != beet.StatusDown || fs.LastEventAt == nil || !fs.LastEventAt.Equal(lp) || !fs.ResumeOnEvent {
		t.Errorf("simple check, last ping %v: %+v; want down, its last event then", lp, fs)
	}
	if !db.ResumeOnEvent || db.LastEventAt == nil {
		t.Errorf("paused check without manual_resume: %+v; want resume_on_event and its last event", db)
	}
	if !strings.HasPrefix(nightly.Token, beet.TokenPrefix) || !beet.ValidTokenShape(nightly.Token) || !slices.Equal(nightly.Tags, []string{"reports"}) ||
		nightly.Detection.Cron != "0 2 * * 1-5" || nightly.Detection.GraceSeconds != 300 {
		t.Errorf("read-only export's cron check: %+v", nightly)
	}

	// Again, and with the files one by one: nothing new.
	for _, args := range [][]string{{dir}, {filepath.Join(dir, "ro.json")}, {filepath.Join(dir, "rw.json")}} {
		out = e.mustRun(nil, append([]string{"import", "healthchecks", "--account", itoa(acct)}, args...)...)
		if lines(out, "created ") != 0 || !strings.Contains(out, "0 created") {
			t.Errorf("a second run created beets:\n%s", out)
		}
	}
	if n := len(beets()); n != 3 {
		t.Errorf("%d beets after the second runs, want 3", n)
	}
}

// TestImportHealthchecksRefuses: a bad file, an unknown account and a
// missing FILE are one line on stderr and a non-zero exit, writing nothing.
func TestImportHealthchecksRefuses(t *testing.T) {
	e := newTestEnv(t)
	acct := e.createAccount("hc2@example.com", "free")
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"checks": [{"name": "x", "timeout": "1h"}]}`), 0o600)
	good := filepath.Join("testdata", "hcimport", "rw.json")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--account", itoa(acct), bad}, 1, `check 1 ("x"): its "timeout" is text; expected a number`},
		{[]string{"--account", "999", good}, 1, "not found"},
		{[]string{"--account", itoa(acct)}, 2, "give one FILE"},
		{[]string{good}, 2, "--account is required"},
	} {
		code, _, errOut := e.run(append([]string{"import", "healthchecks"}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("import %v: exit %d, stderr %q; want %d and %q", c.args, code, errOut, c.code, c.want)
		}
		if c.code == 1 {
			oneLineOn(t, errOut)
		}
	}
}

// TestImportHealthchecksOneFile: a file with a byte order mark imports; a
// check twice in it is a repeat, not "imported before"; a description over
// the limit is cut and said so; a check down in Healthchecks whose
// deadline has not passed (a reported failure) is down, and one with a
// recent last ping is up.
func TestImportHealthchecksOneFile(t *testing.T) {
	e := newTestEnv(t)
	acct := e.createAccount("hc3@example.com", "free")
	recent := time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)
	check := func(name, uuid, status string) string {
		return `{"name": "` + name + `", "uuid": "` + uuid + `", "timeout": 3600, "grace": 600, "status": "` + status +
			`", "last_ping": "` + recent + `", "desc": "` + strings.Repeat("d", beet.MaxDescriptionLen+1) + `"}`
	}
	const up, failed = "31365bce-8da9-4729-8ff3-aaa71d56b712", "803f680d-e89b-492b-82ef-2be7b774a92d"
	file := filepath.Join(t.TempDir(), "checks.json")
	data := "\ufeff" + `{"checks": [` + check("Up", up, "up") + `, ` + check("Up", up, "up") + `, ` + check("Failed", failed, "down") + `]}`
	if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	out := e.mustRun(nil, "import", "healthchecks", "--account", itoa(acct), file)
	for _, want := range []string{
		`repeat  "Up" (checks.json): the same check is in this file twice; imported once`,
		`created "Up": beet 1, up;`,
		`created "Failed": beet 2, down;`,
		`"Up": description cut to its first 2000 characters (it has 2001)`,
		"2 created, 0 imported before, 1 repeated in the export, 0 skipped, 0 failed.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
