package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/hcimport"
	"github.com/beethq/beet/internal/service"
)

// importHealthchecksCmd creates one beet per Healthchecks check of an
// export (docs/MIGRATING.md). It prints a line per check: created (or, with
// --dry-run, would create), exists (imported before: nothing is done), or
// skip with the reason; then a summary. A check that could not be created
// makes the exit status 1, after the others were tried.
func importHealthchecksCmd(c *cli, args []string) error {
	fs, cf := c.configFlags()
	account := fs.Int64("account", 0, "account ID to create the beets in (required)")
	dryRun := fs.Bool("dry-run", false, "print the plan; write nothing")
	var paths []string
	for rest := args; ; {
		err := fs.Parse(rest)
		if errors.Is(err, flag.ErrHelp) {
			c.printHelp(fs)
			return errHelp
		}
		if err != nil {
			return &usageError{msg: err.Error()}
		}
		if fs.NArg() == 0 {
			break
		}
		paths, rest = append(paths, fs.Arg(0)), fs.Args()[1:]
	}
	switch {
	case *account <= 0:
		return usagef("--account is required")
	case len(paths) != 1:
		return usagef("give one FILE (the JSON of GET /api/v3/checks/) or a directory of them")
	}
	checks, err := readExports(paths[0])
	if err != nil {
		return err
	}
	cfg, err := c.config(cf)
	if err != nil {
		return err
	}
	return c.withBackend(cfg, func(b *app.Backend) error {
		if _, err := b.Service.Account(c.ctx, *account); err != nil {
			return err
		}
		return importChecks(c, b.Service, *account, cfg.BaseURL, checks, *dryRun)
	})
}

// sourcedCheck is a check with the file it came from, for the lines.
type sourcedCheck struct {
	hcimport.Check
	file string
}

// readExports reads a file, or every *.json file of a directory in name
// order.
func readExports(path string) ([]sourcedCheck, error) {
	files := []string{path}
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if st.IsDir() {
		files, err = filepath.Glob(filepath.Join(path, "*.json"))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("no *.json file in %s", path)
		}
		sort.Strings(files)
	}
	var out []sourcedCheck
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		checks, err := hcimport.Parse(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, ch := range checks {
			out = append(out, sourcedCheck{ch, filepath.Base(name)})
		}
		if len(out) > hcimport.MaxChecks {
			return nil, fmt.Errorf("more than %d checks; import them in parts", hcimport.MaxChecks)
		}
	}
	return out, nil
}

func importChecks(c *cli, svc *service.Service, accountID int64, baseURL string, checks []sourcedCheck, dryRun bool) error {
	var created, existed, repeated, skipped, failed int
	out := func(format string, args ...any) { fmt.Fprintf(c.stdout, format+"\n", args...) }
	plans := make([]hcimport.Plan, len(checks))
	// The same check in several exports (a read-write and a read-only
	// key's) is imported once, from an export with its UUID if one has it.
	chosen := map[string]int{}
	for i, ch := range checks {
		plans[i] = hcimport.Map(ch.Check)
		if p := plans[i]; p.Skip == "" {
			if j, ok := chosen[p.SourceKey]; !ok || plans[j].Token == "" && p.Token != "" {
				chosen[p.SourceKey] = i
			}
		}
	}
	for i, ch := range checks {
		p := plans[i]
		switch {
		case p.Skip != "":
			skipped++
			out("skip    %q (%s): %s", p.Name, ch.file, p.Skip)
			continue
		case chosen[p.SourceKey] != i && checks[chosen[p.SourceKey]].file == ch.file:
			repeated++
			out("repeat  %q (%s): the same check is in this file twice; imported once", p.Name, ch.file)
			continue
		case chosen[p.SourceKey] != i:
			repeated++
			out("exists  %q (%s): the same check is imported from %s", p.Name, ch.file, checks[chosen[p.SourceKey]].file)
			continue
		}
		if b, err := svc.ImportedBeet(c.ctx, accountID, p.SourceKey); err == nil {
			existed++
			out("exists  %q: beet %d was imported from it before; left as it is", p.Name, b.ID)
			continue
		} else if !beet.IsNotFound(err) {
			return err
		}
		token := "a new token (the export has no UUID): point its clients at the beet's URL"
		if p.Token != "" {
			token = fmt.Sprintf("token %s (the check's UUID): %s/ping/%s keeps working", beet.Redact(p.Token), baseURL, beet.Redact(p.Token))
		}
		if dryRun {
			created++
			out("create  %q: %s; %s", p.Name, p.Describe(), token)
		} else {
			b, err := svc.ImportBeet(c.ctx, accountID, service.ImportInput{
				BeetInput: service.BeetInput{Name: p.Name, Description: p.Description, Timezone: p.Timezone, Detection: &p.Detection,
					ResumeOnEvent: p.ResumeOnEvent},
				Tags: p.Tags, Token: p.Token, SourceKey: p.SourceKey, Paused: p.Paused, LastEventAt: p.LastEventAt, Down: p.Down,
			})
			if err != nil {
				failed++
				if beet.ErrorCode(err) == beet.ECONFLICT && strings.Contains(beet.ErrorMessageWithField(err), "token") {
					out("fail    %q: its UUID is already another beet's token (imported into another account?); not imported", p.Name)
				} else {
					out("fail    %q: %s", p.Name, beet.ErrorMessageWithField(err))
				}
				continue
			}
			created++
			out("created %q: beet %d, %s; %s; %s", p.Name, b.ID, b.Status, p.Describe(), token)
		}
		for _, n := range p.Notes {
			out("        %q: %s", p.Name, n)
		}
	}
	verb := "created"
	if dryRun {
		verb = "to create (dry run: nothing written)"
	}
	out("%d %s, %d imported before, %d repeated in the export, %d skipped, %d failed. Channels are not imported: add them in Beet; new beets notify all of the account's channels.",
		created, verb, existed, repeated, skipped, failed)
	if failed > 0 {
		return fmt.Errorf("%d checks could not be imported", failed)
	}
	return nil
}
