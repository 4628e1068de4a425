package config

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
)

// Effective is one setting as it will be used: for `beet config check`.
type Effective struct {
	Env, Flag string
	// Value is the text in force, masked for secrets: a URL keeps all but
	// its password, anything else shows only that it is set.
	Value  string
	Source Source
	// Err is what is wrong with it, or nil.
	Err error
}

// Effective resolves every setting as Config does and reports each with
// its source and its error, if any. The error is only for a settings file
// that cannot be read.
func (f *Flags) Effective() ([]Effective, error) {
	res, err := f.resolve()
	if err != nil {
		return nil, err
	}
	c, errs := build(res)
	out := make([]Effective, len(settings))
	for i, s := range settings {
		raw := res[i].raw
		if s.env == "BEET_BASE_URL" && raw == "" {
			raw = c.BaseURL // the derived default, shown as used
		}
		out[i] = Effective{Env: s.env, Flag: s.flag, Value: raw, Source: res[i].source}
		if s.secret {
			out[i].Value = mask(raw)
		}
		for _, e := range errs {
			if e.Env == s.env {
				out[i].Err = e.Err
			}
		}
	}
	return out, nil
}

// mask hides a secret value: URLs lose their password, other values show
// only whether they are set.
func mask(v string) string {
	if v == "" {
		return ""
	}
	if u, err := url.Parse(v); err == nil && u.Scheme != "" && u.Host != "" {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		u.RawQuery = maskQuery(u.Query())
		return u.String()
	}
	return "(set, hidden)"
}

// maskQuery hides query parameters that usually carry secrets.
func maskQuery(q url.Values) string {
	for k := range q {
		switch strings.ToLower(k) {
		case "password", "pass", "token", "secret", "sslpassword":
			q.Set(k, "xxxxx")
		}
	}
	return q.Encode()
}

// UnknownVariable is a BEET_* variable in the environment that names no
// setting, with the closest setting name when one is near.
type UnknownVariable struct {
	Name, Suggestion string
}

// String words the warning.
func (u UnknownVariable) String() string {
	if u.Suggestion != "" {
		return u.Name + " is not a Beet setting (did you mean " + u.Suggestion + "?); it is ignored"
	}
	return u.Name + " is not a Beet setting; it is ignored"
}

// UnknownVariables lists the BEET_* names in environ (os.Environ's
// "KEY=value" form) that no setting reads, sorted. BEET_TEST_* belong to
// the test suite and are left out.
func UnknownVariables(environ []string) []UnknownVariable {
	var out []UnknownVariable
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "BEET_") || strings.HasPrefix(name, "BEET_TEST_") ||
			name == "BEET_CONFIG" || isSetting(name) {
			continue
		}
		out = append(out, UnknownVariable{Name: name, Suggestion: suggest(name)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func isSetting(name string) bool {
	for _, s := range settings {
		if s.env == name {
			return true
		}
	}
	return false
}

// suggest returns the setting name closest to name by edit distance, if
// it is close enough to be a typo (at most a third of the name differs).
func suggest(name string) string {
	best, bestD := "", len(name)/3+1
	for _, s := range settings {
		if d := distance(name, s.env); d < bestD {
			best, bestD = s.env, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// mustNotBeEmpty are the variables whose empty value would silently mean a
// default that loses data: an empty BEET_DATABASE_URL (an unset ${DB_URL},
// an empty Secret key) would serve on a new sqlite://beet.db, answering
// every ping and recording none where the operator looks.
var mustNotBeEmpty = []string{"BEET_DATABASE_URL"}

// EmptyVariables refuses each of mustNotBeEmpty that environ (os.Environ's
// "KEY=value" form) sets to the empty string while no flag gives the
// setting: unset it for the default, or give the value.
func (f *Flags) EmptyVariables(environ []string) error {
	var errs Errors
	for i, s := range settings {
		if !slices.Contains(mustNotBeEmpty, s.env) || f.values[i].set {
			continue
		}
		for _, kv := range environ {
			if name, v, _ := strings.Cut(kv, "="); name == s.env && strings.TrimSpace(v) == "" {
				errs = append(errs, &SettingError{Env: s.env, Flag: s.flag,
					Err: fmt.Errorf("is set but empty: unset it for the default (%s), or give the URL", s.def)})
				break
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}
