// Command beet is Beet's one binary: the service (serve) and the operator
// commands around it (migrate, accounts, apikeys, import, cleanup, version). Every
// command reads the same BEET_* environment, and flags override it; see
// internal/config for the table.
//
// Output is JSON on stdout (cleanup prints lines for people unless --json).
// An error is one line on stderr and exit status 1; a usage error exits 2.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	_ "time/tzdata" // time zones work in a static binary without /usr/share/zoneinfo

	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/sqlstore"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

// command is one leaf of the command tree.
type command struct {
	name    string // "accounts create"
	args    string // synopsis of its flags, for usage lines
	summary string
	run     func(c *cli, args []string) error
}

var commands = []command{
	{"serve", "[config flags]", "run the service: ingestion, API, background jobs", serveCmd},
	{"migrate", "[config flags]", "bring the database schema up to date", migrateCmd},
	{"accounts create", "--email E --password P [--plan free|starter|pro|enterprise]", "create an account with its first user and API key", accountsCreateCmd},
	{"accounts list", "", "list accounts with their plans and users' emails", accountsListCmd},
	{"accounts set-plan", "--account N --plan P", "change an account's plan (retention follows on the next clean-up)", accountsSetPlanCmd},
	{"accounts set-password", "--email E < password", "set a user's password (asked without echo, or the first line of stdin), ending the user's sessions", accountsSetPasswordCmd},
	{"accounts remove-user", "--email E", "remove a user, signing them out at once (an account keeps at least one user)", accountsRemoveUserCmd},
	{"apikeys create", "--account N [--name S] [--read-only]", "create an API key for an account (read-write unless --read-only)", apikeysCreateCmd},
	{"apikeys revoke", "--id N", "revoke an API key", apikeysRevokeCmd},
	{"secrets rotate", "[config flags]", "re-encrypt every channel secret with BEET_SECRET_KEY (old keys in BEET_SECRET_KEY_OLD)", secretsRotateCmd},
	{"import healthchecks", "--account N [--dry-run] FILE|DIR", "create a beet per check of a Healthchecks export (GET /api/v3/checks/); runs again without duplicates", importHealthchecksCmd},
	{"cleanup", "[--now RFC3339] [--dry-run] [--json]", "run one retention clean-up pass", cleanupCmd},
	{"backtest", "[--mode auto|period|cron] [--period D --grace D] [--cron EXPR] [--timezone TZ] [--until RFC3339] [--watching] < events.csv", "replay past events through the detector; print its flips", backtestCmd},
	{"config check", "[config flags] [--config FILE]", "print the effective settings (secrets masked); exit 1 if one is invalid", configCheckCmd},
	{"backup", "--output FILE [config flags]", "copy the SQLite database while serve runs, verified (PostgreSQL: prints the pg_dump line)", backupCmd},
	{"healthcheck", "[--url URL] [--timeout D]", "exit 0 if the instance on BEET_LISTEN is ready (GET /readyz): the container health check", healthcheckCmd},
	{"version", "", "print the version", versionCmd},
}

// cli is what a command runs with: the process's context, environment and
// output streams, injected so tests call run directly.
type cli struct {
	ctx            context.Context
	getenv         func(string) string
	stdin          io.Reader
	stdout, stderr io.Writer
	cmd            command
}

// usageError is a mistake in how a command was called: exit status 2.
// bare leaves out the synopsis, for bad settings where it would not help.
type usageError struct {
	msg  string
	bare bool
}

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// errHelp asks for the command's full usage on stdout and exit status 0.
var errHelp = errors.New("help requested")

// run is main without os.Exit: it returns the exit status.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return 2
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage())
		return 0
	}
	cmd, rest, ok := lookup(args)
	if !ok && len(subcommands(args[0])) > 0 {
		fmt.Fprintf(stderr, "beet %s: want a subcommand: %s\n", args[0], strings.Join(subcommands(args[0]), ", "))
		return 2
	}
	if !ok {
		fmt.Fprintf(stderr, "beet: unknown command %q (run 'beet help' for the commands)\n", strings.Join(args[:min(2, len(args))], " "))
		return 2
	}
	c := &cli{ctx: ctx, getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr, cmd: cmd}
	err := cmd.run(c, rest)
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errHelp):
		return 0
	case errors.As(err, &ue) && ue.bare:
		fmt.Fprintf(stderr, "beet %s: %s\n", cmd.name, oneLine(err.Error()))
		return 2
	case errors.As(err, &ue): // one line, as every error (CONTRACT); -h gives the synopsis
		fmt.Fprintf(stderr, "beet %s: %s (run 'beet %s -h' for every flag)\n", cmd.name, oneLine(err.Error()), cmd.name)
		return 2
	default:
		fmt.Fprintf(stderr, "beet %s: %s\n", cmd.name, oneLine(err.Error()))
		return 1
	}
}

// lookup finds the command named by the first one or two arguments.
func lookup(args []string) (command, []string, bool) {
	for _, c := range commands {
		words := strings.Fields(c.name)
		if len(args) >= len(words) && strings.Join(args[:len(words)], " ") == c.name {
			return c, args[len(words):], true
		}
	}
	return command{}, nil, false
}

// subcommands lists the subcommands of a command group such as "accounts".
func subcommands(group string) []string {
	var out []string
	for _, c := range commands {
		if sub, ok := strings.CutPrefix(c.name, group+" "); ok {
			out = append(out, sub)
		}
	}
	return out
}

func usage() string {
	var b strings.Builder
	b.WriteString("usage: beet <command> [flags]\n\ncommands:\n")
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name))
	}
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, c.name, c.summary)
	}
	b.WriteString("\nEvery command reads the BEET_* environment; flags override it. Run 'beet <command> -h' for flags.\n")
	return b.String()
}

// oneLine keeps an error on one line of stderr, as the CLI contract asks.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

// flags returns the command's FlagSet. Parse errors print nothing: run
// prints one line and the synopsis instead of flag's long listing.
func (c *cli) flags() *flag.FlagSet {
	fs := flag.NewFlagSet("beet "+c.cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// configFlags is flags with the shared settings bound on it (config.Bind),
// the opening of every command that reads the configuration.
func (c *cli) configFlags() (*flag.FlagSet, *config.Flags) {
	fs := c.flags()
	return fs, config.Bind(fs, c.getenv)
}

// parse parses args into fs. -h prints the full flag list on stdout.
func (c *cli) parse(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		c.printHelp(fs)
		return errHelp
	}
	if err != nil {
		return &usageError{msg: err.Error()}
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// printHelp lists the command's own flags first, then the configuration
// flags every command shares, so that -h shows what is particular to the
// command instead of burying it among twenty settings.
func (c *cli) printHelp(fs *flag.FlagSet) {
	fmt.Fprintf(c.stdout, "usage: beet %s %s\n\n%s.\n", c.cmd.name, c.cmd.args, c.cmd.summary)
	own, shared := flag.NewFlagSet("", flag.ContinueOnError), flag.NewFlagSet("", flag.ContinueOnError)
	fs.VisitAll(func(f *flag.Flag) {
		if strings.Contains(f.Usage, "[$BEET_") { // a setting bound by config.Bind
			shared.Var(f.Value, f.Name, f.Usage)
		} else {
			own.Var(f.Value, f.Name, f.Usage)
		}
	})
	for _, part := range []struct {
		title string
		fs    *flag.FlagSet
	}{{"flags of this command", own}, {"configuration (every command; BEET_* variables)", shared}} {
		n := 0
		part.fs.VisitAll(func(*flag.Flag) { n++ })
		if n == 0 {
			continue
		}
		fmt.Fprintf(c.stdout, "\n%s:\n", part.title)
		part.fs.SetOutput(c.stdout)
		part.fs.PrintDefaults()
	}
}

// config resolves the configuration after parse. A bad setting is a usage
// error: the command cannot run as called.
func (c *cli) config(f *config.Flags) (config.Config, error) {
	cfg, err := f.Config()
	if err != nil {
		return cfg, &usageError{msg: err.Error(), bare: true}
	}
	if err := f.EmptyVariables(environ()); err != nil {
		return cfg, &usageError{msg: err.Error(), bare: true}
	}
	c.warnUnknown(cfg)
	return cfg, nil
}

// parseConfig is the opening of a command that takes only the shared
// settings: it parses args as flags over the environment and returns the
// config they give.
func (c *cli) parseConfig(args []string) (config.Config, error) {
	fs, cf := c.configFlags()
	if err := c.parse(fs, args); err != nil {
		return config.Config{}, err
	}
	return c.config(cf)
}

// logger logs to stderr as cfg says. One-off commands keep stderr for their
// one-line errors, so below debug they log warnings and errors only.
func (c *cli) logger(cfg config.Config, oneOff bool) *slog.Logger {
	level := cfg.LogLevel
	if oneOff && level > slog.LevelDebug {
		level = max(level, slog.LevelWarn)
	}
	return app.NewLogger(c.stderr, level, cfg.LogFormat)
}

// withBackend opens and migrates the database, runs fn and closes it.
// Only serve and migrate create a SQLite file: any other command run in
// the wrong directory (or with a mistyped path) would make an empty
// database beside the real one and report that nothing is there. They
// refuse in one line that names the absolute path they would have created.
func (c *cli) withBackend(cfg config.Config, fn func(b *app.Backend) error) error {
	switch c.cmd.name {
	case "migrate", "serve":
	default:
		path, err := sqliteMissing(cfg.DatabaseURL)
		if err != nil {
			return err
		}
		if path != "" {
			return fmt.Errorf("no database at %s: this command would create it empty; run 'beet migrate' (or 'beet serve') to create it there, or set BEET_DATABASE_URL (now %s) to the existing one", path, cfg.DatabaseURL)
		}
	}
	b, err := app.OpenBackend(c.ctx, cfg, app.Options{Log: c.logger(cfg, true)})
	if err != nil {
		return err
	}
	return errors.Join(fn(b), b.Close())
}

// sqliteMissing returns the absolute path of the SQLite file the URL
// names when that file does not exist, or "". A URL the store would refuse
// (a query string: sqlite:///beet.db?mode=ro) is refused first, in the
// words migrate and serve use, not taken for a file whose name ends in
// "?mode=ro".
func sqliteMissing(databaseURL string) (string, error) {
	rest, ok := strings.CutPrefix(databaseURL, "sqlite:")
	if !ok {
		return "", nil
	}
	if err := sqlstore.CheckURL(databaseURL); err != nil {
		return "", fmt.Errorf("open database: open sqlite: %w", err)
	}
	abs, err := filepath.Abs(strings.TrimPrefix(rest, "//"))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); errors.Is(err, os.ErrNotExist) {
		return abs, nil
	}
	return "", nil
}

// withBackendFrom builds the config the flags and environment give, then
// runs fn with the backend it names (see withBackend).
func (c *cli) withBackendFrom(cf *config.Flags, fn func(b *app.Backend) error) error {
	cfg, err := c.config(cf)
	if err != nil {
		return err
	}
	return c.withBackend(cfg, fn)
}

// printJSON writes v to stdout as one line of JSON.
func (c *cli) printJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(c.stdout, "%s\n", b)
	return err
}
