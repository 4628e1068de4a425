package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/redis/go-redis/v9"

	"github.com/beethq/beet/internal/config"
	"github.com/beethq/beet/internal/notify"
	"github.com/beethq/beet/internal/sqlstore"
)

// CheckConfig is the whole validation of a configuration, shared by
// `beet serve` (New) and `beet config check`: the settings' own checks,
// then what the adapters would refuse at start (the database URL as the
// store reads it, the mail server URL as email channels read it, the Redis
// URL as go-redis reads it, the spool's path as ingestion opens it). Every
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
	if cfg.RedisURL != "" && !has(errs, "BEET_REDIS_URL") {
		if _, err := redis.ParseURL(cfg.RedisURL); err != nil {
			errs = append(errs, &config.SettingError{Env: "BEET_REDIS_URL", Flag: "redis-url", Err: err})
		}
	}
	if cfg.RunsHTTP() && !has(errs, "BEET_SPOOL_PATH") && !has(errs, "BEET_DATABASE_URL") {
		if err := checkSpoolPath(cfg); err != nil {
			errs = append(errs, &config.SettingError{Env: "BEET_SPOOL_PATH", Flag: "spool-path", Err: err})
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// checkSpoolPath refuses a spool that ingestion could not open: a
// directory, a file in a directory that is missing or not writable (the
// spool keeps its lock and .applied files beside it), or the SQLite file.
func checkSpoolPath(cfg config.Config) error {
	path := spoolPath(cfg)
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory: name a file in it", path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return fmt.Errorf("the directory of %s does not exist", path)
	}
	probe, err := os.CreateTemp(dir, ".beet-spool-check-*")
	if err != nil {
		return fmt.Errorf("cannot create files in %s, where the spool keeps its files", dir)
	}
	probe.Close()
	os.Remove(probe.Name())
	if db, ok := sqlitePath(cfg.DatabaseURL); ok {
		a, errA := filepath.Abs(db)
		b, errB := filepath.Abs(path)
		same := errA == nil && errB == nil && a == b
		if fa, err := os.Stat(db); err == nil {
			if fb, err := os.Stat(path); err == nil && os.SameFile(fa, fb) {
				same = true
			}
		}
		if same {
			return errors.New("is the database file: give the spool a file of its own")
		}
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
