package beet

import (
	"strings"
	"time"
)

// ValidateTimezone checks that tz names an IANA time zone ("UTC", "Europe/Riga").
func ValidateTimezone(field, tz string) error {
	if tz == "" {
		return FieldError(field, "is required")
	}
	// time.LoadLocation also accepts "Local" and file paths; only IANA names are meant here.
	if tz == "Local" || strings.HasPrefix(tz, "/") || strings.Contains(tz, "..") || len(tz) > 64 {
		return FieldError(field, "%q is not an IANA time zone name", tz)
	}
	if _, err := time.LoadLocation(tz); err != nil {
		return FieldError(field, "%q is not an IANA time zone name", tz)
	}
	return nil
}
