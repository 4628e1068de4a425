package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/config"
)

// accountJSON is an account in `accounts list`.
type accountJSON struct {
	ID        int64     `json:"id"`
	Plan      beet.Plan `json:"plan"`
	Retention string    `json:"retention"`
	// Users are the emails of the account's users, oldest first: the
	// account the setup page made is found by its owner's email.
	Users     []string  `json:"users"`
	CreatedAt time.Time `json:"created_at"`
}

func accountsCreateCmd(c *cli, args []string) error {
	fs, cf := c.configFlags()
	email := fs.String("email", "", "the first user's email (required)")
	password := fs.String("password", "", "the first user's password (required)")
	planName := fs.String("plan", string(beet.PlanFree), "free, starter, pro or enterprise")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if *email == "" || *password == "" {
		return usagef("--email and --password are required")
	}
	plan, err := parsePlan(*planName)
	if err != nil {
		return err
	}
	return c.withBackendFrom(cf, func(b *app.Backend) error {
		acc, key, err := b.Service.CreateAccount(c.ctx, *email, *password, plan)
		if err != nil {
			return err
		}
		return c.printJSON(struct {
			AccountID int64  `json:"account_id"`
			APIKey    string `json:"api_key"`
		}{acc.ID, key})
	})
}

func accountsListCmd(c *cli, args []string) error {
	fs, cf := c.configFlags()
	if err := c.parse(fs, args); err != nil {
		return err
	}
	return c.withBackendFrom(cf, func(b *app.Backend) error {
		accs, err := b.Service.ListAccounts(c.ctx)
		if err != nil {
			return err
		}
		out := make([]accountJSON, 0, len(accs))
		for _, a := range accs {
			users, err := b.Service.Users(c.ctx, a.ID)
			if err != nil {
				return err
			}
			emails := make([]string, 0, len(users))
			for _, u := range users {
				emails = append(emails, u.Email)
			}
			out = append(out, accountJSON{a.ID, a.Plan, a.Plan.RetentionText(), emails, a.CreatedAt.UTC()})
		}
		return c.printJSON(map[string]any{"accounts": out})
	})
}

func accountsSetPlanCmd(c *cli, args []string) error {
	fs, cf := c.configFlags()
	id := fs.Int64("account", 0, "account ID (required)")
	planName := fs.String("plan", "", "free, starter, pro or enterprise (required)")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if *id <= 0 || *planName == "" {
		return usagef("--account and --plan are required")
	}
	plan, err := parsePlan(*planName)
	if err != nil {
		return err
	}
	return c.withBackendFrom(cf, func(b *app.Backend) error {
		if err := b.Service.SetPlan(c.ctx, *id, plan); err != nil {
			return err
		}
		return c.printJSON(struct {
			AccountID int64     `json:"account_id"`
			Plan      beet.Plan `json:"plan"`
			Retention string    `json:"retention"`
		}{*id, plan, plan.RetentionText()})
	})
}

// parsePlan reads a --plan value; an unknown plan is a usage error.
func parsePlan(s string) (beet.Plan, error) {
	p, err := beet.ParsePlan("plan", s)
	if err != nil {
		return "", usagef("--plan: %s", beet.ErrorMessage(err))
	}
	return p, nil
}

// accountsSetPasswordCmd sets a user's password: the reset path for a
// self-hoster who forgot theirs (Beet sends no mail for it). The password
// is never a flag, which would leave it in the shell history and in ps:
// it is read from a prompt without echo, or from the first line of stdin
// when stdin is not a terminal (`beet accounts set-password --email E < file`).
func accountsSetPasswordCmd(c *cli, args []string) error {
	cf, email, err := c.parseUserEmail(args)
	if err != nil {
		return err
	}
	pw, err := c.readPassword()
	if err != nil {
		return err
	}
	return c.withBackendFrom(cf, func(b *app.Backend) error {
		u, err := b.Service.SetPassword(c.ctx, email, pw)
		if beet.IsNotFound(err) {
			return fmt.Errorf("no user has the email %s", email)
		}
		if err != nil {
			return err
		}
		return c.printJSON(struct {
			UserID    int64 `json:"user_id"`
			AccountID int64 `json:"account_id"`
			Changed   bool  `json:"password_changed"`
		}{u.ID, u.AccountID, true})
	})
}

// accountsRemoveUserCmd removes a user (and their sessions: they are
// signed out at once). An account keeps at least one user; to close an
// account, there is nothing yet.
func accountsRemoveUserCmd(c *cli, args []string) error {
	cf, email, err := c.parseUserEmail(args)
	if err != nil {
		return err
	}
	return c.withBackendFrom(cf, func(b *app.Backend) error {
		u, err := b.Service.RemoveUserByEmail(c.ctx, email)
		switch beet.ErrorCode(err) {
		case "":
		case beet.ENOTFOUND:
			return fmt.Errorf("no user has the email %s; nothing was removed", email)
		case beet.ECONFLICT:
			return fmt.Errorf("%s is the only user of their account, which needs at least one; add another user first (dashboard: Account, Users), then remove this one", email)
		default:
			return err
		}
		return c.printJSON(struct {
			UserID    int64 `json:"user_id"`
			AccountID int64 `json:"account_id"`
			Removed   bool  `json:"removed"`
		}{u.ID, u.AccountID, true})
	})
}

// parseUserEmail is the opening of a command that acts on one user: it
// parses args with the required --email and returns the settings and
// the email.
func (c *cli) parseUserEmail(args []string) (*config.Flags, string, error) {
	fs, cf := c.configFlags()
	email := fs.String("email", "", "the user's email (required)")
	if err := c.parse(fs, args); err != nil {
		return nil, "", err
	}
	if *email == "" {
		return nil, "", usagef("--email is required")
	}
	return cf, *email, nil
}

// readPassword prompts twice without echo on a terminal, or reads one line
// of stdin otherwise.
func (c *cli) readPassword() (string, error) {
	if f, ok := c.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(c.stderr, "New password: ")
		a, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(c.stderr)
		if err != nil {
			return "", fmt.Errorf("read the password: %w", err)
		}
		fmt.Fprint(c.stderr, "Again: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(c.stderr)
		if err != nil {
			return "", fmt.Errorf("read the password: %w", err)
		}
		if string(a) != string(b) {
			return "", errors.New("the two passwords differ; nothing was changed")
		}
		return string(a), nil
	}
	line, err := bufio.NewReader(io.LimitReader(c.stdin, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the password from stdin: %w", err)
	}
	pw := strings.TrimRight(line, "\r\n")
	if pw == "" {
		return "", usagef("no password on stdin: pipe it in (echo … |) or run in a terminal to be asked")
	}
	return pw, nil
}
