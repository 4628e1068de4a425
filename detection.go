package beet

import (
	"encoding/json"
	"time"
)

// DetectionMode says how a beet decides it is late.
type DetectionMode string

const (
	ModeAuto   DetectionMode = "auto"   // learned from the beet's own history
	ModePeriod DetectionMode = "period" // an event at least every period, plus grace
	ModeCron   DetectionMode = "cron"   // a run per cron slot in a time zone, plus grace
)

// Limits of detection settings (CONTRACT §2).
const (
	MinPeriod  = 60 * time.Second
	MaxPeriod  = 365 * 24 * time.Hour
	MaxGrace   = 365 * 24 * time.Hour
	MaxCronLen = 100
	MaxRuntime = 365 * 24 * time.Hour
)

// Detection holds a beet's detection settings. Its JSON form is the API's.
type Detection struct {
	Mode          DetectionMode `json:"mode"`
	PeriodSeconds int64         `json:"period_seconds,omitempty"`
	GraceSeconds  int64         `json:"grace_seconds,omitempty"`
	Cron          string        `json:"cron,omitempty"`
	Timezone      string        `json:"timezone,omitempty"`
	// MaxRuntimeSeconds, in any mode, is how long a started run may take
	// before the beet goes down; 0 leaves it to what past runs took (auto
	// mode) or to no limit (period and cron modes).
	MaxRuntimeSeconds int64 `json:"max_runtime_seconds,omitempty"`
}

// MarshalJSON writes the settings as Detection's tags say, but a period or
// cron beet's grace_seconds even when 0: a client that set no grace reads
// it back as 0 rather than not at all.
func (d Detection) MarshalJSON() ([]byte, error) {
	type plain Detection // the same fields without this method
	if d.Mode != ModePeriod && d.Mode != ModeCron {
		return json.Marshal(plain(d))
	}
	return json.Marshal(struct {
		plain
		GraceSeconds int64 `json:"grace_seconds"` // shallower, so it wins over plain's
	}{plain(d), d.GraceSeconds})
}

// Validate checks the settings for the chosen mode and rejects fields that
// belong to another mode, so a typo does not silently fall back to auto.
func (d Detection) Validate() error {
	if r := time.Duration(d.MaxRuntimeSeconds) * time.Second; d.MaxRuntimeSeconds < 0 || r > MaxRuntime {
		return FieldError("detection.max_runtime_seconds", "must be from 0 (no limit set) to %d", int64(MaxRuntime/time.Second))
	}
	switch d.Mode {
	case ModeAuto:
		if d.PeriodSeconds != 0 || d.GraceSeconds != 0 || d.Cron != "" || d.Timezone != "" {
			return FieldError("detection", "auto mode takes no other settings than max_runtime_seconds")
		}
	case ModePeriod:
		if d.PeriodSeconds == 0 {
			return FieldError("detection.period_seconds", "is required in period mode (%d to %d)", int64(MinPeriod/time.Second), int64(MaxPeriod/time.Second))
		}
		if p := time.Duration(d.PeriodSeconds) * time.Second; p < MinPeriod || p > MaxPeriod {
			return FieldError("detection.period_seconds", "must be from %d to %d", int64(MinPeriod/time.Second), int64(MaxPeriod/time.Second))
		}
		if err := validateGrace(d.GraceSeconds); err != nil {
			return err
		}
		if d.Cron != "" || d.Timezone != "" {
			return FieldError("detection", "period mode takes period_seconds and grace_seconds only")
		}
	case ModeCron:
		if d.Cron == "" {
			return FieldError("detection.cron", "is required in cron mode")
		}
		if len(d.Cron) > MaxCronLen {
			return FieldError("detection.cron", "is longer than %d characters", MaxCronLen)
		}
		if err := ValidateTimezone("detection.timezone", d.Timezone); err != nil {
			return err
		}
		if err := validateGrace(d.GraceSeconds); err != nil {
			return err
		}
		if d.PeriodSeconds != 0 {
			return FieldError("detection.period_seconds", "is not used in cron mode")
		}
	case "":
		return FieldError("detection.mode", "is required (auto, period or cron)")
	default:
		return FieldError("detection.mode", "unknown mode %q (want auto, period or cron)", d.Mode)
	}
	return nil
}

func validateGrace(s int64) error {
	if s < 0 || time.Duration(s)*time.Second > MaxGrace {
		return FieldError("detection.grace_seconds", "must be from 0 to %d", int64(MaxGrace/time.Second))
	}
	return nil
}
