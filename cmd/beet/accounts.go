package main

import (
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/config"
)

// accountJSON is an account in `accounts list`.
type accountJSON struct {
	ID        int64     `json:"id"`
	Plan      beet.Plan `json:"plan"`
	Retention string    `json:"retention"`
	CreatedAt time.Time `json:"created_at"`
}

func accountsCreateCmd(c *cli, args []string) error {
	fs := c.flags()
	cf := config.Bind(fs, c.getenv)
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
	fs := c.flags()
	cf := config.Bind(fs, c.getenv)
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
			out = append(out, accountJSON{a.ID, a.Plan, a.Plan.RetentionText(), a.CreatedAt.UTC()})
		}
		return c.printJSON(map[string]any{"accounts": out})
	})
}

func accountsSetPlanCmd(c *cli, args []string) error {
	fs := c.flags()
	cf := config.Bind(fs, c.getenv)
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
