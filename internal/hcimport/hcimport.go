// Package hcimport maps Healthchecks checks to beets: it reads the JSON of
// Healthchecks' GET /api/v3/checks/ (v1 and v2 have the same shape, with a
// read-write or a read-only key) and plans one beet per check. A check it
// cannot map (an OnCalendar schedule, a field out of Beet's bounds) is
// skipped with its reason, never guessed. It does no I/O besides reading.
package hcimport

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/schedule"
)

// Limits on what one import reads.
const (
	MaxFileBytes = 64 << 20
	MaxChecks    = 10000
)

// SourcePrefix starts every source key: "healthchecks:" and the check's
// unique_key.
const SourcePrefix = "healthchecks:"

// Check is one check as the API lists it; other fields are ignored.
type Check struct {
	Name     string   `json:"name"`
	Slug     string   `json:"slug"`
	Tags     string   `json:"tags"`
	Desc     string   `json:"desc"`
	Grace    *float64 `json:"grace"`
	Timeout  *float64 `json:"timeout"`
	Schedule *string  `json:"schedule"`
	TZ       string   `json:"tz"`
	Status   string   `json:"status"`
	// LastPing is the time of the last ping (RFC 3339), null before one.
	LastPing *string `json:"last_ping"`
	// ManualResume: a paused check stays paused when pinged; without it
	// (Healthchecks' default) a ping resumes it.
	ManualResume bool   `json:"manual_resume"`
	UUID         string `json:"uuid"`       // read-write keys (API v3)
	PingURL      string `json:"ping_url"`   // read-write keys: {ping endpoint}{uuid}
	UniqueKey    string `json:"unique_key"` // read-only keys, instead of the UUID
}

// Parse reads one export: {"checks": [...]} as GET /api/v3/checks/ gives
// it, or a bare list of checks.
func Parse(r io.Reader) ([]Check, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("over %d MiB; split the export", MaxFileBytes>>20)
	}
	// A byte order mark (Windows editors and PowerShell's Out-File write
	// one) is not JSON, but says nothing wrong about the file.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	// Each check is decoded on its own, so a wrong type is named with its
	// check's index whatever the Go release (encoding/json put the index
	// in UnmarshalTypeError.Field only from Go 1.27).
	var env struct {
		Checks *[]json.RawMessage `json:"checks"`
	}
	var raw []json.RawMessage
	path := ""
	switch trimmed := strings.TrimSpace(string(data)); {
	case strings.HasPrefix(trimmed, "["):
		err = json.Unmarshal(data, &raw)
	case strings.HasPrefix(trimmed, "{"):
		path = "checks."
		err = json.Unmarshal(data, &env)
		if err == nil && env.Checks == nil {
			err = errors.New(`no "checks" list: expected the JSON of GET /api/v3/checks/`)
		}
		if env.Checks != nil {
			raw = *env.Checks
		}
	default:
		err = errors.New("not JSON: expected the JSON of GET /api/v3/checks/")
	}
	if err != nil {
		return nil, jsonError(err, strings.TrimSuffix(path, "."))
	}
	if len(raw) > MaxChecks {
		return nil, fmt.Errorf("%d checks; at most %d are imported at once", len(raw), MaxChecks)
	}
	checks := make([]Check, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &checks[i]); err != nil {
			return nil, checkError(err, i, r)
		}
	}
	return checks, nil
}

// checkError says, in plain words, what is wrong with the i-th check (raw):
// which check (its number from 1 and its name, if it has one) and which
// field holds what, instead of encoding/json's Go types.
func checkError(err error, i int, raw json.RawMessage) error {
	which := fmt.Sprintf("check %d", i+1)
	var named struct {
		Name any `json:"name"`
	}
	if json.Unmarshal(raw, &named) == nil {
		if name, ok := named.Name.(string); ok && strings.TrimSpace(name) != "" {
			which += fmt.Sprintf(" (%.60q)", name)
		}
	}
	var typ *json.UnmarshalTypeError
	if !errors.As(err, &typ) {
		return fmt.Errorf("%s: %w", which, jsonError(err, ""))
	}
	field := typ.Field
	if j := strings.LastIndexByte(field, '.'); j >= 0 {
		field = field[j+1:] // Go 1.26 names it check.timeout, Go 1.27 timeout
	}
	if field == "" {
		return fmt.Errorf("%s is %s, not an object", which, jsonWord(typ.Value))
	}
	return fmt.Errorf("%s: its %q is %s; expected %s", which, field, jsonWord(typ.Value), kindWord(typ.Type))
}

// jsonWord names a JSON value's kind (as UnmarshalTypeError.Value gives it).
func jsonWord(v string) string {
	switch {
	case v == "string":
		return "text"
	case v == "number" || strings.HasPrefix(v, "number "):
		return "a number"
	case v == "bool":
		return "true or false"
	case v == "array":
		return "a list"
	case v == "object":
		return "an object"
	}
	return v
}

// kindWord names what a Go type takes, in JSON's words.
func kindWord(t reflect.Type) string {
	if t == nil {
		return "an object"
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "text"
	case reflect.Float64, reflect.Float32, reflect.Int, reflect.Int64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list"
	}
	return "an object"
}

// jsonError says what is wrong with the JSON at path (the list, or one
// check in it).
func jsonError(err error, path string) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("not valid JSON at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ):
		field := path
		if typ.Field != "" {
			field = typ.Field // the envelope's own field: checks
		}
		return fmt.Errorf("%q is %s; expected %s", field, jsonWord(typ.Value), kindWord(typ.Type))
	}
	return err
}

// Plan is what becomes of one check.
type Plan struct {
	Name string
	// SourceKey identifies the check across exports and runs; "" only when
	// skipped for having neither a UUID nor a unique_key.
	SourceKey string
	// Skip is why the check is not imported; "" when it is.
	Skip string
	// What a beet is made of, when not skipped.
	Description string
	Timezone    string // "" for the account's
	Detection   beet.Detection
	Tags        []string
	Token       string // the check's UUID; "" when the export has none (read-only key)
	Paused      bool
	// ResumeOnEvent is !manual_resume: Healthchecks resumes a paused
	// check on its next ping unless manual_resume is set.
	ResumeOnEvent bool
	// LastEventAt is the check's last ping; nil before one. Down: the
	// check was down in Healthchecks.
	LastEventAt *time.Time
	Down        bool
	// Notes are what was left out of an imported check (tags Beet cannot
	// take).
	Notes []string
}

// Map plans the beet for c.
func Map(c Check) Plan {
	p := Plan{Name: strings.TrimSpace(c.Name)}
	if p.Name == "" {
		p.Name = c.Slug
	}
	uuid := strings.ToLower(c.UUID)
	if uuid == "" && c.PingURL != "" {
		uuid = strings.ToLower(c.PingURL[strings.LastIndexByte(c.PingURL, '/')+1:])
	}
	switch {
	case beet.IsUUIDToken(uuid):
		p.Token = uuid
		p.SourceKey = SourcePrefix + UniqueKey(uuid)
	case uuid != "":
		p.Skip = fmt.Sprintf("its uuid %.40q is not a UUID", uuid)
		return p
	case isUniqueKey(c.UniqueKey):
		p.SourceKey = SourcePrefix + c.UniqueKey
	case c.UniqueKey != "":
		p.Skip = fmt.Sprintf("its unique_key %.60q is not 40 hex digits", c.UniqueKey)
		return p
	default:
		p.Skip = "it has neither uuid nor unique_key (not an export of GET /api/v3/checks/)"
		return p
	}
	if p.Name == "" {
		p.Name = "unnamed " + strings.TrimPrefix(p.SourceKey, SourcePrefix)[:8]
	}
	p.Description = c.Desc
	if n := utf8.RuneCountInString(p.Description); n > beet.MaxDescriptionLen {
		p.Description = string([]rune(p.Description)[:beet.MaxDescriptionLen])
		p.Notes = append(p.Notes, fmt.Sprintf("description cut to its first %d characters (it has %d)", beet.MaxDescriptionLen, n))
	}
	p.Paused = c.Status == "paused"
	p.Down = c.Status == "down"
	p.ResumeOnEvent = !c.ManualResume
	if c.LastPing != nil {
		if t, err := time.Parse(time.RFC3339, *c.LastPing); err == nil {
			t = t.UTC()
			p.LastEventAt = &t
		} else {
			p.Notes = append(p.Notes, fmt.Sprintf("last_ping %.40q is not an RFC 3339 time: left out, the beet starts new", *c.LastPing))
		}
	}
	grace, ok := seconds(c.Grace)
	if !ok {
		p.Skip = "its grace is missing or not whole seconds"
		return p
	}
	switch {
	case c.Schedule != nil:
		sched := strings.TrimSpace(*c.Schedule)
		if !looksLikeCron(sched) {
			p.Skip = fmt.Sprintf("its schedule %.80q is an OnCalendar expression; Beet takes cron schedules (5 fields) only", sched)
			return p
		}
		if _, err := schedule.ParseCron(sched); err != nil {
			p.Skip = fmt.Sprintf("its cron schedule %.80q: %v", sched, err)
			return p
		}
		tz := c.TZ
		if tz == "" {
			tz = "UTC" // Healthchecks' default zone for a schedule
		}
		p.Timezone = tz
		p.Detection = beet.Detection{Mode: beet.ModeCron, Cron: sched, Timezone: tz, GraceSeconds: grace}
	case c.Timeout != nil:
		period, ok := seconds(c.Timeout)
		if !ok {
			p.Skip = "its timeout is not whole seconds"
			return p
		}
		p.Detection = beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: period, GraceSeconds: grace}
	default:
		p.Skip = "it has neither timeout nor schedule"
		return p
	}
	b := beet.Beet{Name: p.Name, Description: p.Description, Timezone: p.Timezone, Detection: p.Detection}
	if b.Timezone == "" {
		b.Timezone = "UTC" // stands in for the account's zone, which is valid
	}
	if err := b.Validate(); err != nil {
		p.Skip = beet.ErrorMessageWithField(err)
		return p
	}
	tags, notes := mapTags(c.Tags)
	p.Tags, p.Notes = tags, append(p.Notes, notes...)
	return p
}

// UniqueKey is Healthchecks' unique_key of a check with that UUID: the
// SHA-1 (hex) of the first 16 hex digits of the UUID, the identifier a
// read-only key's export gives instead of the UUID.
func UniqueKey(uuid string) string {
	hexUUID := strings.ReplaceAll(uuid, "-", "")
	sum := sha1.Sum([]byte(hexUUID[:16]))
	return hex.EncodeToString(sum[:])
}

func isUniqueKey(s string) bool {
	if len(s) != 40 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// looksLikeCron tells a cron expression (five fields, or a macro such as
// @daily) from a systemd OnCalendar one (*-*-* 02:00:00, Mon..Fri, daily).
func looksLikeCron(s string) bool {
	if strings.HasPrefix(s, "@") {
		return true
	}
	return len(strings.Fields(s)) == 5 && !strings.ContainsAny(s, ":~") && !strings.Contains(s, "..")
}

// seconds reads a whole, non-negative number of seconds.
func seconds(v *float64) (int64, bool) {
	if v == nil || *v < 0 || *v > 1e12 || *v != float64(int64(*v)) {
		return 0, false
	}
	return int64(*v), true
}

// mapTags splits Healthchecks' space-separated tags into Beet's; a tag
// Beet cannot take is left out and named in a note.
func mapTags(s string) (tags, notes []string) {
	seen := map[string]bool{}
	for _, t := range strings.Fields(s) {
		lt := strings.ToLower(t)
		if err := beet.ValidateTag("tags", lt); err != nil {
			notes = append(notes, fmt.Sprintf("tag %.40q left out: %s", t, beet.ErrorMessage(err)))
			continue
		}
		if seen[lt] {
			continue
		}
		if len(tags) == beet.MaxTagsPerBeet {
			notes = append(notes, fmt.Sprintf("tag %q left out: at most %d tags a beet", lt, beet.MaxTagsPerBeet))
			continue
		}
		seen[lt] = true
		tags = append(tags, lt)
	}
	return tags, notes
}

// Describe says in a few words how a planned beet is watched.
func (p Plan) Describe() string {
	var b strings.Builder
	switch p.Detection.Mode {
	case beet.ModeCron:
		fmt.Fprintf(&b, "cron %q in %s, grace %s", p.Detection.Cron, p.Detection.Timezone, span(p.Detection.GraceSeconds))
	default:
		fmt.Fprintf(&b, "every %s, grace %s", span(p.Detection.PeriodSeconds), span(p.Detection.GraceSeconds))
	}
	if len(p.Tags) > 0 {
		fmt.Fprintf(&b, "; tags %s", strings.Join(p.Tags, " "))
	}
	switch {
	case p.Paused && p.ResumeOnEvent:
		b.WriteString("; paused until its next ping")
	case p.Paused:
		b.WriteString("; paused until resumed (manual_resume)")
	case p.Down:
		b.WriteString("; down in Healthchecks")
	}
	if p.LastEventAt != nil {
		fmt.Fprintf(&b, "; last ping %s", p.LastEventAt.Format(time.RFC3339))
	}
	return b.String()
}

// span formats whole seconds in the largest unit that divides them.
func span(s int64) string {
	for _, u := range []struct {
		n    int64
		unit string
	}{{86400, "d"}, {3600, "h"}, {60, "m"}} {
		if s >= u.n && s%u.n == 0 {
			return strconv.FormatInt(s/u.n, 10) + u.unit
		}
	}
	return strconv.FormatInt(s, 10) + "s"
}
