package main

import (
	"github.com/beethq/beet/internal/app"
)

func apikeysCreateCmd(c *cli, args []string) error {
	fs, cf := c.configFlags()
	account := fs.Int64("account", 0, "account ID (required)")
	name := fs.String("name", "", "a name to tell the key apart")
	readOnly := fs.Bool("read-only", false, "the key may only read (GET); every call that changes state is refused with 403")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if *account <= 0 {
		return usagef("--account is required")
	}
	return c.withBackendFrom(cf, func(b *app.Backend) error {
		k, key, err := b.Service.CreateScopedAPIKey(c.ctx, *account, *name, *readOnly)
		if err != nil {
			return err
		}
		return c.printJSON(struct {
			ID        int64  `json:"id"`
			AccountID int64  `json:"account_id"`
			APIKey    string `json:"api_key"`
			ReadOnly  bool   `json:"read_only"`
		}{k.ID, k.AccountID, key, k.ReadOnly})
	})
}

func apikeysRevokeCmd(c *cli, args []string) error {
	fs, cf := c.configFlags()
	id := fs.Int64("id", 0, "API key ID (required)")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if *id <= 0 {
		return usagef("--id is required")
	}
	return c.withBackendFrom(cf, func(b *app.Backend) error {
		if err := b.Service.RevokeAPIKey(c.ctx, *id); err != nil {
			return err
		}
		return c.printJSON(struct {
			ID      int64 `json:"id"`
			Revoked bool  `json:"revoked"`
		}{*id, true})
	})
}
