package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/config"
)

// environ lists the process's environment, for the unknown-variable
// warnings; a variable so tests can swap it.
var environ = os.Environ

// warnUnknown logs one warning per BEET_* variable that names no setting.
func (c *cli) warnUnknown(cfg config.Config) {
	unknown := config.UnknownVariables(environ())
	if len(unknown) == 0 {
		return
	}
	log := c.logger(cfg, true)
	for _, u := range unknown {
		log.Warn(u.String(), "variable", u.Name, "did_you_mean", u.Suggestion)
	}
}

// configCheckCmd prints every setting as it would be used (secrets
// masked) with its source, and fails when one is invalid.
func configCheckCmd(c *cli, args []string) error {
	fs, cf := c.configFlags()
	if err := c.parse(fs, args); err != nil {
		return err
	}
	eff, err := cf.Effective()
	if err != nil {
		return err
	}
	// What serve refuses beyond the settings' own checks (a set but empty
	// database URL; the adapters' reading of the database, mail and Redis
	// URLs and the spool's path): the same validation, once every setting
	// parses.
	if cfg, err := cf.Config(); err == nil {
		var errs config.Errors
		for _, err := range []error{cf.EmptyVariables(environ()), app.CheckConfig(cfg)} {
			var more config.Errors
			if errors.As(err, &more) {
				errs = append(errs, more...)
			}
		}
		for _, se := range errs {
			for i := range eff {
				if eff[i].Env == se.Env && eff[i].Err == nil {
					eff[i].Err = se.Err
				}
			}
		}
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	var bad []string
	for _, e := range eff {
		value := e.Value
		if value == "" {
			value = "(none)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Env, value, e.Source)
		if e.Err != nil {
			fmt.Fprintf(tw, "  ^ invalid:\t%v\t\n", e.Err)
			bad = append(bad, e.Env)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, u := range config.UnknownVariables(environ()) {
		fmt.Fprintf(c.stdout, "warning: %s\n", u)
	}
	for _, e := range eff {
		if e.Env == "BEET_SECRET_KEY" && e.Value == "" {
			fmt.Fprintln(c.stdout, "warning: BEET_SECRET_KEY is not set: channel secrets are stored in plain text in the database (docs/SECURITY.md)")
		}
	}
	if len(bad) > 0 {
		return errors.New("invalid settings: " + strings.Join(bad, ", "))
	}
	return nil
}
