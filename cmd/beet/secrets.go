package main

import (
	"github.com/beethq/beet/internal/app"
)

// secretsRotateCmd re-encrypts every channel secret under BEET_SECRET_KEY:
// values sealed with a key in BEET_SECRET_KEY_OLD, and plain ones. After
// it, the old keys can be dropped (docs/SECURITY.md, "Secrets at rest").
func secretsRotateCmd(c *cli, args []string) error {
	cfg, err := c.parseConfig(args)
	if err != nil {
		return err
	}
	if cfg.SecretKey == "" {
		return usagef("BEET_SECRET_KEY (--secret-key) is required: it is the key the secrets are encrypted with")
	}
	return c.withBackend(cfg, func(b *app.Backend) error {
		rep, err := b.Store.SealChannelSecrets(c.ctx, true)
		if err != nil {
			return err
		}
		keys, _ := cfg.SecretKeys()
		return c.printJSON(struct {
			Key      string `json:"key"`
			Channels int    `json:"channels"`
			Sealed   int    `json:"sealed"`
			Resealed int    `json:"resealed"`
		}{keys.Current().ID(), rep.Channels, b.Secrets.Sealed + rep.Sealed, rep.Resealed})
	})
}
