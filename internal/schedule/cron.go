// Package schedule parses and evaluates cron expressions for beets in cron
// detection mode. It wraps github.com/hashicorp/cronexpr and keeps Beet to
// the classic five fields, so an expression means the same thing here as in
// a crontab.
package schedule

import (
	"fmt"
	"strings"

	"github.com/hashicorp/cronexpr"
)

// macros are the crontab shorthands users paste; each stands for five fields.
var macros = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// Cron is a parsed five-field cron expression.
type Cron struct {
	expr *cronexpr.Expression
	text string
}

// ParseCron parses a five-field cron expression (minute hour day-of-month
// month day-of-week) or one of the @daily-style macros.
func ParseCron(text string) (*Cron, error) {
	fields := strings.Fields(text)
	if len(fields) == 1 {
		if m, ok := macros[strings.ToLower(fields[0])]; ok {
			fields = strings.Fields(m)
		}
	}
	if len(fields) != 5 {
		return nil, fmt.Errorf("want 5 fields (minute hour day-of-month month day-of-week), got %d", len(fields))
	}
	// cronexpr reads 5 fields as minute-first, like crontab.
	e, err := cronexpr.Parse(strings.Join(fields, " "))
	if err != nil {
		return nil, err
	}
	return &Cron{expr: e, text: strings.Join(fields, " ")}, nil
}

// String returns the normalised five-field expression.
func (c *Cron) String() string { return c.text }
