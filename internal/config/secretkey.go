package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/beethq/beet/internal/secretbox"
)

// Channel secrets at rest (docs/SECURITY.md, "Secrets at rest"):
//
//	BEET_SECRET_KEY      --secret-key      (none)   32 random bytes in base64 (openssl rand -base64 32): seals channel secrets in the database
//	BEET_SECRET_KEY_OLD  --secret-key-old  (none)   comma-separated keys in use before a rotation: read, never written
//
// Without BEET_SECRET_KEY channel secrets are stored as given and serve
// warns at start; once any is sealed, Beet refuses to start without the key.

func init() {
	settings = append(settings, secretKeySettings...)
}

var secretKeySettings = []setting{
	{
		env: "BEET_SECRET_KEY", flag: "secret-key", def: "", secret: true,
		usage: "32 random bytes in base64 (openssl rand -base64 32) that encrypt channel secrets in the database",
		parse: func(c *Config, s string) error { c.SecretKey = strings.TrimSpace(s); return nil },
		check: func(c Config) error {
			if c.SecretKey == "" {
				return nil
			}
			_, err := secretbox.ParseKey(c.SecretKey)
			return err
		},
	},
	{
		env: "BEET_SECRET_KEY_OLD", flag: "secret-key-old", def: "", secret: true,
		usage: "comma-separated keys used before BEET_SECRET_KEY, to read secrets sealed with them until `beet secrets rotate`",
		parse: func(c *Config, s string) error { c.SecretKeyOld = strings.TrimSpace(s); return nil },
		check: func(c Config) error {
			if c.SecretKeyOld == "" {
				return nil
			}
			if c.SecretKey == "" {
				return errSecretKeyOldAlone
			}
			// SecretKeys names the setting; this check's caller does too.
			_, err := c.SecretKeys()
			var se *SettingError
			if errors.As(err, &se) {
				if se.Env != "BEET_SECRET_KEY_OLD" {
					return nil // the current key's own check reports it
				}
				return se.Err
			}
			return err
		},
	},
}

var errSecretKeyOldAlone = errors.New("needs BEET_SECRET_KEY: old keys only read, new secrets are sealed with the current key")

// SecretKeys is the keyring BEET_SECRET_KEY and BEET_SECRET_KEY_OLD make,
// or nil when no key is set. Errors never contain a key.
func (c Config) SecretKeys() (*secretbox.Keyring, error) {
	if c.SecretKey == "" {
		return nil, nil
	}
	cur, err := secretbox.ParseKey(c.SecretKey)
	if err != nil {
		return nil, &SettingError{Env: "BEET_SECRET_KEY", Flag: "secret-key", Err: err}
	}
	var old []*secretbox.Key
	for i, s := range strings.Split(c.SecretKeyOld, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		k, err := secretbox.ParseKey(s)
		if err != nil {
			return nil, &SettingError{Env: "BEET_SECRET_KEY_OLD", Flag: "secret-key-old", Err: fmt.Errorf("key %d %w", i+1, err)}
		}
		old = append(old, k)
	}
	return secretbox.NewKeyring(cur, old...)
}
