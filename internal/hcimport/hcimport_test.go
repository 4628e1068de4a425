package hcimport

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/beethq/beet"
)

// TestUniqueKey: the read-only key's unique_key of a check is derived
// from its UUID as Healthchecks derives it (the pairs are Healthchecks'
// own API documentation's examples), so both exports of a check are one.
func TestUniqueKey(t *testing.T) {
	for uuid, key := range map[string]string{
		"31365bce-8da9-4729-8ff3-aaa71d56b712": "a6c7b0a8a66bed0df66abfdab3c77736861703ee",
		"803f680d-e89b-492b-82ef-2be7b774a92d": "124f983e0e3dcaeba921cfcef46efd084576e783",
	} {
		if got := UniqueKey(uuid); got != key {
			t.Errorf("UniqueKey(%s) = %s, want %s", uuid, got, key)
		}
	}
}

func TestMap(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	s := func(v string) *string { return &v }
	const id = "31365bce-8da9-4729-8ff3-aaa71d56b712"
	for _, c := range []struct {
		name  string
		check Check
		skip  string // part of the reason; "" when imported
		mode  beet.DetectionMode
	}{
		{"simple", Check{Name: "a", UUID: id, Timeout: f(3600), Grace: f(600)}, "", beet.ModePeriod},
		{"v1 export: uuid from ping_url", Check{Name: "a", PingURL: "https://hc-ping.com/" + id, Timeout: f(60), Grace: f(60)}, "", beet.ModePeriod},
		{"cron", Check{Name: "a", UUID: id, Schedule: s("*/10 * * * *"), TZ: "Europe/Riga", Grace: f(300)}, "", beet.ModeCron},
		{"cron macro", Check{Name: "a", UUID: id, Schedule: s("@daily"), Grace: f(300)}, "", beet.ModeCron},
		{"OnCalendar", Check{Name: "a", UUID: id, Schedule: s("*-*-* 02:00:00"), TZ: "UTC", Grace: f(300)}, "OnCalendar", ""},
		{"OnCalendar word", Check{Name: "a", UUID: id, Schedule: s("weekly"), Grace: f(300)}, "OnCalendar", ""},
		{"OnCalendar range", Check{Name: "a", UUID: id, Schedule: s("Mon..Fri *-*-* 9 0 0"), Grace: f(300)}, "OnCalendar", ""},
		{"bad cron", Check{Name: "a", UUID: id, Schedule: s("61 * * * *"), Grace: f(300)}, "cron schedule", ""},
		{"bad zone", Check{Name: "a", UUID: id, Schedule: s("0 * * * *"), TZ: "Mars/Base", Grace: f(300)}, "time zone", ""},
		{"period too short", Check{Name: "a", UUID: id, Timeout: f(30), Grace: f(60)}, "period_seconds", ""},
		{"fractional timeout", Check{Name: "a", UUID: id, Timeout: f(60.5), Grace: f(60)}, "whole seconds", ""},
		{"no grace", Check{Name: "a", UUID: id, Timeout: f(60)}, "grace", ""},
		{"neither", Check{Name: "a", UUID: id, Grace: f(60)}, "neither timeout nor schedule", ""},
		{"no id", Check{Name: "a", Timeout: f(60), Grace: f(60)}, "neither uuid nor unique_key", ""},
		{"bad uuid", Check{Name: "a", UUID: "nope", Timeout: f(60), Grace: f(60)}, "not a UUID", ""},
		{"bad unique_key", Check{Name: "a", UniqueKey: "xyz", Timeout: f(60), Grace: f(60)}, "40 hex", ""},
		{"long name", Check{Name: strings.Repeat("n", 201), UUID: id, Timeout: f(60), Grace: f(60)}, "name", ""},
	} {
		p := Map(c.check)
		switch {
		case c.skip == "" && p.Skip != "":
			t.Errorf("%s: skipped: %s", c.name, p.Skip)
		case c.skip != "" && !strings.Contains(p.Skip, c.skip):
			t.Errorf("%s: skip %q, want it to say %q", c.name, p.Skip, c.skip)
		case c.skip == "" && (p.Detection.Mode != c.mode || p.Token != id || p.SourceKey != SourcePrefix+UniqueKey(id)):
			t.Errorf("%s: %+v", c.name, p)
		}
	}
	p := Map(Check{Name: "", Slug: "nightly", UniqueKey: UniqueKey(id), Tags: "Prod web prod a:b " + strings.Repeat("t ", 3) + "1 2 3 4 5 6 7 8 9", Timeout: f(60), Grace: f(60), Status: "paused"})
	if p.Skip != "" || p.Name != "nightly" || p.Token != "" || !p.Paused || p.SourceKey != SourcePrefix+UniqueKey(id) {
		t.Errorf("read-only check: %+v", p)
	}
	if len(p.Tags) != beet.MaxTagsPerBeet || p.Tags[0] != "prod" || len(p.Notes) != 3 {
		t.Errorf("tags %v, notes %q; want 10 tags from prod on, a:b and two over the limit left out", p.Tags, p.Notes)
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct{ in, err string }{
		{`{"checks": []}`, ""},
		{`[{"name": "a"}]`, ""},
		{`{"checks": [{"name": "a", "grace": 60, "extra": {"x": [1]}}]}`, ""},
		{`{"check": []}`, `no "checks" list`},
		{`{"checks": [{"grace": "60"}]}`, `check 1: its "grace" is text; expected a number`},
		{`[{"name": "db", "tags": 5}]`, `check 1 ("db"): its "tags" is a number; expected text`},
		{`{"checks": {}}`, `"checks" is an object; expected a list`},
		{"\ufeff" + `{"checks": [{"name": "a"}]}`, ""}, // a byte order mark
		{`{"checks": [`, "not valid JSON"},
		{`name: a`, "not JSON"},
	} {
		_, err := Parse(strings.NewReader(c.in))
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("Parse(%q) = %v, want %q", c.in, err, c.err)
		}
	}
	for _, in := range []string{`{"checks": [{"timeout": "1h"}]}`, `[{"tags": 5}]`, `{"checks": 1}`} {
		if _, err := Parse(strings.NewReader(in)); err == nil || strings.Contains(err.Error(), "Go ") ||
			strings.Contains(err.Error(), "float64") || strings.Contains(err.Error(), "json.") {
			t.Errorf("Parse(%q) = %v, want a plain error", in, err)
		}
	}
	big := `{"checks": [` + strings.Repeat(`{},`, MaxChecks) + `{}]}`
	if _, err := Parse(strings.NewReader(big)); err == nil {
		t.Errorf("%d checks parsed, want refused", MaxChecks+1)
	}
}

// FuzzParse: any file parses or is refused without panicking, and every
// check either is skipped with a reason or maps to a beet that passes
// Beet's validation, with a source key and a token of a token's shape.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"checks": []}`, `{"checks": [{"name": "a", "uuid": "31365bce-8da9-4729-8ff3-aaa71d56b712", "timeout": 60, "grace": 60}]}`,
		`[{"unique_key": "a6c7b0a8a66bed0df66abfdab3c77736861703ee", "schedule": "0 2 * * *", "tz": "UTC", "grace": 60, "tags": "a B c:d"}]`,
		`[{"ping_url": "https://x/31365bce-8da9-4729-8ff3-aaa71d56b712", "schedule": "Mon *-*-* 2:00", "grace": 1e300}]`, `[`, `{"checks": null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checks, err := Parse(strings.NewReader(string(data)))
		if err != nil {
			return
		}
		for _, c := range checks {
			p := Map(c)
			if p.Skip != "" {
				continue
			}
			b := beet.Beet{Name: p.Name, Description: p.Description, Timezone: p.Timezone, Detection: p.Detection}
			if b.Timezone == "" {
				b.Timezone = "UTC"
			}
			if err := b.Validate(); err != nil {
				t.Fatalf("check %+v maps to an invalid beet: %v", c, err)
			}
			if !strings.HasPrefix(p.SourceKey, SourcePrefix) || p.Token != "" && !beet.ValidTokenShape(p.Token) {
				t.Fatalf("check %+v: source key %q, token %q", c, p.SourceKey, p.Token)
			}
			if _, err := beet.CleanTags("tags", p.Tags); err != nil {
				t.Fatalf("check %+v: tags %v: %v", c, p.Tags, err)
			}
		}
	})
}

// TestMapState: a check's last ping, status and manual_resume reach the
// plan (Healthchecks resumes a paused check on a ping unless
// manual_resume); an over-long description is cut, with a note, not a skip.
func TestMapState(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	s := func(v string) *string { return &v }
	const id = "31365bce-8da9-4729-8ff3-aaa71d56b712"
	p := Map(Check{Name: "a", UUID: id, Timeout: f(3600), Grace: f(60), Status: "down", LastPing: s("2020-03-24T16:02:03+02:00")})
	if p.Skip != "" || !p.Down || p.Paused || !p.ResumeOnEvent || p.LastEventAt == nil ||
		!p.LastEventAt.Equal(time.Date(2020, 3, 24, 14, 2, 3, 0, time.UTC)) {
		t.Errorf("down check: %+v", p)
	}
	p = Map(Check{Name: "a", UUID: id, Timeout: f(3600), Grace: f(60), Status: "paused", ManualResume: true, LastPing: s("yesterday")})
	if p.Skip != "" || !p.Paused || p.ResumeOnEvent || p.LastEventAt != nil || len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "last_ping") {
		t.Errorf("paused check with manual_resume, bad last_ping: %+v", p)
	}
	long := strings.Repeat("é", beet.MaxDescriptionLen+5)
	p = Map(Check{Name: "a", UUID: id, Timeout: f(3600), Grace: f(60), Desc: long})
	if p.Skip != "" || utf8.RuneCountInString(p.Description) != beet.MaxDescriptionLen || len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "description cut") {
		t.Errorf("long description: skip %q, %d characters, notes %q", p.Skip, utf8.RuneCountInString(p.Description), p.Notes)
	}
}
