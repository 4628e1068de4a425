package beet

import "time"

// Plan decides how long an account's events are kept.
type Plan string

const (
	PlanFree       Plan = "free"
	PlanStarter    Plan = "starter"
	PlanPro        Plan = "pro"
	PlanEnterprise Plan = "enterprise"
)

// Plans lists every plan, shortest retention first.
var Plans = []Plan{PlanFree, PlanStarter, PlanPro, PlanEnterprise}

// Valid reports whether p is a known plan.
func (p Plan) Valid() bool {
	for _, q := range Plans {
		if p == q {
			return true
		}
	}
	return false
}

// ParsePlan returns the plan named s or a validation error naming field.
func ParsePlan(field, s string) (Plan, error) {
	p := Plan(s)
	if !p.Valid() {
		return "", FieldError(field, "unknown plan %q (want free, starter, pro or enterprise)", s)
	}
	return p, nil
}

// RetentionCutoff returns the instant before which an account on plan p no
// longer keeps events, as of now. Free keeps 30 × 24 h; the others keep
// calendar years (in UTC), so a leap day does not shorten a year (CONTRACT §3).
func (p Plan) RetentionCutoff(now time.Time) time.Time {
	now = now.UTC()
	switch p {
	case PlanStarter:
		return yearsBefore(now, 1)
	case PlanPro, PlanEnterprise:
		return yearsBefore(now, 3)
	default:
		return now.Add(-30 * 24 * time.Hour)
	}
}

// yearsBefore is the same time n calendar years before t; from February 29
// it is February 28 of a common year, where AddDate would normalise to
// March 1 and keep a day less.
func yearsBefore(t time.Time, n int) time.Time {
	y, m, d := t.Date()
	if m == time.February && d == 29 && !isLeap(y-n) {
		d = 28
	}
	return time.Date(y-n, m, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// RetentionText describes p's retention for people.
func (p Plan) RetentionText() string {
	switch p {
	case PlanStarter:
		return "1 year"
	case PlanPro, PlanEnterprise:
		return "3 years"
	default:
		return "30 days"
	}
}
