package beet_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/beethq/beet"
)

func TestDetectionValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		d     beet.Detection
		field string // "" means valid
	}{
		{"auto", beet.Detection{Mode: beet.ModeAuto}, ""},
		{"auto with period", beet.Detection{Mode: beet.ModeAuto, PeriodSeconds: 60}, "detection"},
		{"period", beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 3600, GraceSeconds: 300}, ""},
		{"period too short", beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 59}, "detection.period_seconds"},
		{"period too long", beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 366 * 86400}, "detection.period_seconds"},
		{"negative grace", beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 60, GraceSeconds: -1}, "detection.grace_seconds"},
		{"cron", beet.Detection{Mode: beet.ModeCron, Cron: "0 2 * * *", Timezone: "Europe/Riga", GraceSeconds: 120}, ""},
		{"cron without tz", beet.Detection{Mode: beet.ModeCron, Cron: "0 2 * * *"}, "detection.timezone"},
		{"cron bad tz", beet.Detection{Mode: beet.ModeCron, Cron: "0 2 * * *", Timezone: "Mars/Olympus"}, "detection.timezone"},
		{"cron too long", beet.Detection{Mode: beet.ModeCron, Cron: strings.Repeat("1", 101), Timezone: "UTC"}, "detection.cron"},
		{"no mode", beet.Detection{}, "detection.mode"},
		{"bad mode", beet.Detection{Mode: "weekly"}, "detection.mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.d.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if beet.ErrorCode(err) != beet.EVALIDATION || beet.ErrorField(err) != tc.field {
				t.Fatalf("Validate() = %v, want a validation error on %q", err, tc.field)
			}
		})
	}
}

func TestValidateTimezoneRejectsNonIANA(t *testing.T) {
	for _, tz := range []string{"", "Local", "/etc/localtime", "../../etc/passwd", "Not/AZone"} {
		if err := beet.ValidateTimezone("timezone", tz); err == nil {
			t.Errorf("ValidateTimezone(%q) = nil, want error", tz)
		}
	}
	if err := beet.ValidateTimezone("timezone", "America/New_York"); err != nil {
		t.Fatal(err)
	}
}

// A period or cron beet's grace is written even when 0; auto mode has none.
func TestDetectionJSONKeepsZeroGrace(t *testing.T) {
	cases := []struct {
		d    beet.Detection
		want string
	}{
		{beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 60}, `{"mode":"period","period_seconds":60,"grace_seconds":0}`},
		{beet.Detection{Mode: beet.ModeCron, Cron: "@daily", Timezone: "UTC"}, `{"mode":"cron","cron":"@daily","timezone":"UTC","grace_seconds":0}`},
		{beet.Detection{Mode: beet.ModeCron, Cron: "@daily", Timezone: "UTC", GraceSeconds: 300, MaxRuntimeSeconds: 60}, `{"mode":"cron","cron":"@daily","timezone":"UTC","max_runtime_seconds":60,"grace_seconds":300}`},
		{beet.Detection{Mode: beet.ModeAuto}, `{"mode":"auto"}`},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.d)
		if err != nil || string(b) != c.want {
			t.Errorf("json.Marshal(%+v) = %s, %v; want %s", c.d, b, err, c.want)
		}
		var back beet.Detection
		if err := json.Unmarshal(b, &back); err != nil || back != c.d {
			t.Errorf("%s read back as %+v, %v", b, back, err)
		}
	}
}
