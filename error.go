// Package beet holds Beet's domain: accounts and plans, beets and their
// tokens, events, problems and flips, the rules that validate them, and the
// store interfaces the adapters implement. It imports only the standard
// library; HTTP, SQL and the command line live in internal/ at the edges.
package beet

import (
	"errors"
	"fmt"
	"time"
)

// Error codes are stable strings: the management API returns them to clients
// and the CLI prints them, so they are part of the public interface.
const (
	ECONFLICT     = "conflict"          // the resource exists, or changed under us
	EINTERNAL     = "internal"          // a bug or an outage; details go to the log only
	EINVALID      = "invalid"           // the request is malformed (400)
	ENOTFOUND     = "not_found"         // missing, or not this account's
	EUNAUTHORIZED = "unauthorized"      // no or bad credentials
	EFORBIDDEN    = "forbidden"         // credentials fine, action not allowed
	EVALIDATION   = "validation_failed" // well-formed but a field is out of bounds (422)
	ETOOLARGE     = "payload_too_large"
	EMEDIATYPE    = "unsupported_media_type"
	ERATELIMITED  = "rate_limited"
	EUNAVAILABLE  = "unavailable" // the database cannot be reached now: try again (503)
)

// Error is a domain error that is safe to show to the caller. Field names the
// input field at fault for validation errors.
type Error struct {
	Code    string
	Message string
	Field   string
	// RetryAfter is how long until a refused request (ERATELIMITED) would
	// be taken, when known: the API answers it in Retry-After.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %s", e.Code, e.Field, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Errorf returns an *Error with the given code.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// FieldError returns a validation error that names the field at fault.
func FieldError(field, format string, args ...any) *Error {
	return &Error{Code: EVALIDATION, Field: field, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the *Error in err's chain, EINTERNAL for any
// other error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message of the *Error in err's chain, or a generic
// text for internal errors so that their details never reach a client.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// ErrorMessageWithField returns the message prefixed with its field, for
// one-line errors on a command line: "detection.period_seconds: must be …".
func ErrorMessageWithField(err error) string {
	if f := ErrorField(err); f != "" {
		return f + ": " + ErrorMessage(err)
	}
	return ErrorMessage(err)
}

// ErrorField returns the field named by a validation error, or "".
func ErrorField(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}

// RateLimited returns an ERATELIMITED error whose request would be taken
// after wait.
func RateLimited(wait time.Duration, format string, args ...any) *Error {
	return &Error{Code: ERATELIMITED, Message: fmt.Sprintf(format, args...), RetryAfter: wait}
}

// ErrorRetryAfter returns the wait of the *Error in err's chain, or 0.
func ErrorRetryAfter(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}

// IsNotFound reports whether err is a not-found domain error.
func IsNotFound(err error) bool { return ErrorCode(err) == ENOTFOUND }
