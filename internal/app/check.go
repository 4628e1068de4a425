package app

import (
	"errors"

	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/notify"
	"github.com/beethq/beet/internal/sqlstore"
)

// CheckConfig is the whole validation of a configuration, shared by
// `beet serve` (New) and `beet config check`: the settings' own checks,
// then what the adapters would refuse at start (the database URL as the
// store reads it, the mail server URL as email channels read it). Every
// error names its setting and never shows a secret.
func CheckConfig(cfg config.Config) error {
	var errs config.Errors
	if err := cfg.Validate(); err != nil && !errors.As(err, &errs) {
		return err
	}
	if !has(errs, "BEET_DATABASE_URL") {
		if err := sqlstore.CheckURL(cfg.DatabaseURL); err != nil {
			errs = append(errs, &config.SettingError{Env: "BEET_DATABASE_URL", Flag: "database-url", Err: err})
		}
	}
	if cfg.SMTPURL != "" && !has(errs, "BEET_SMTP_URL") {
		if _, err := notify.ParseSMTPURL(cfg.SMTPURL); err != nil {
			errs = append(errs, &config.SettingError{Env: "BEET_SMTP_URL", Flag: "smtp-url", Err: err})
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

func has(errs config.Errors, env string) bool {
	for _, e := range errs {
		if e.Env == env {
			return true
		}
	}
	return false
}
