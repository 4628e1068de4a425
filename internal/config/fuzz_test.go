package config

import (
	"strings"
	"testing"
)

// FuzzSetting gives one setting any text, from the environment or a flag.
// Load never panics; what it accepts passes Validate; and an error about a
// secret setting (database, Redis and SMTP URLs) never repeats its value.
func FuzzSetting(f *testing.F) {
	for i, s := range settings {
		f.Add(uint8(i), s.def, "", false)
	}
	for _, s := range []struct {
		env, value string
	}{
		{"BEET_DATABASE_URL", "postgres://beet:|@db:5432/beet?sslmode=disable"},
		{"BEET_DATABASE_URL", "postgres://beet:|@[::1%zz]:5432/beet"},
		{"BEET_DATABASE_URL", "sqlite:///var/lib/beet/|.db?_pragma=busy_timeout(5000)"},
		{"BEET_DATABASE_URL", "|"},
		{"BEET_REDIS_URL", "redis://:|@cache:6379/0"},
		{"BEET_REDIS_URL", "redis://:|@%zz"},
		{"BEET_SMTP_URL", "smtp://u:|@mail:587?from=alerts@example.com&tls=none"},
		{"BEET_SMTP_URL", "smtps://u:|@:465"},
		{"BEET_LISTEN", "[::1]:9|9"},
		{"BEET_BASE_URL", "https://beet.example.com/|/"},
		{"BEET_CLEANUP_INTERVAL", "-92233720368547758|08ns"},
		{"BEET_INGEST_WAIT", "1e4|00s"},
		{"BEET_TRUSTED_PROXIES", "10.0.0.0/8, ::1, fe80::|1%eth0/64"},
	} {
		before, after, _ := strings.Cut(s.value, "|")
		f.Add(uint8(settingIndex(s.env)), before, after, false)
		f.Add(uint8(settingIndex(s.env)), before, after, true)
	}
	// A secret setting's value carries a marker password between the two
	// fuzzed halves; no error may show it.
	const marker = "hunter2hunter2"
	f.Fuzz(func(t *testing.T, index uint8, before, after string, asFlag bool) {
		s := settings[int(index)%len(settings)]
		value := before + after
		if s.secret {
			value = before + marker + after
		}
		vars := map[string]string{s.env: value}
		var args []string
		if asFlag {
			vars, args = nil, []string{"--" + s.flag + "=" + value}
		}
		c, err := Load(args, func(k string) string { return vars[k] })
		if err == nil {
			if verr := c.Validate(); verr != nil {
				t.Fatalf("%s=%q loads but does not validate: %v", s.env, value, verr)
			}
			return
		}
		if s.secret && strings.Contains(err.Error(), marker) {
			t.Fatalf("the error repeats the secret in %s: %v", s.env, err)
		}
	})
}
