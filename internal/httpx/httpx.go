// Package httpx is the HTTP plumbing shared by Beet's JSON surfaces:
// decoding strict JSON bodies, writing JSON, and turning domain errors into
// responses with stable codes.
package httpx

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/beethq/beet"
)

// MaxJSONBody bounds a management API request body.
const MaxJSONBody = 64 << 10

// ErrorBody is the JSON shape of every management API error.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail carries a stable code, a message for people, and the field at
// fault for validation errors.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

var statusByCode = map[string]int{
	beet.EINVALID:        http.StatusBadRequest,
	beet.EUNAUTHORIZED:   http.StatusUnauthorized,
	beet.EFORBIDDEN:      http.StatusForbidden,
	beet.ENOTFOUND:       http.StatusNotFound,
	beet.ECONFLICT:       http.StatusConflict,
	beet.ETOOLARGE:       http.StatusRequestEntityTooLarge,
	beet.EMEDIATYPE:      http.StatusUnsupportedMediaType,
	beet.EVALIDATION:     http.StatusUnprocessableEntity,
	beet.ERATELIMITED:    http.StatusTooManyRequests,
	beet.EINTERNAL:       http.StatusInternalServerError,
	beet.EUNAVAILABLE:    http.StatusServiceUnavailable,
	"method_not_allowed": http.StatusMethodNotAllowed,
}

// StatusOf returns the HTTP status for an error code.
func StatusOf(code string) int {
	if s, ok := statusByCode[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// WriteJSON writes v as JSON with the given status. Encoding happens before
// the header is sent, so a value that cannot be encoded becomes a 500.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"error":{"code":"internal","message":"internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff") // an error echoing input is never read as HTML
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

// Error writes err as a JSON error. Internal errors are logged with the
// request and answered with a generic message, so details never leak.
func Error(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	code := beet.ErrorCode(err)
	if code == beet.EINTERNAL && unreachable(err) {
		log.WarnContext(r.Context(), "request failed: the database cannot be reached", "method", r.Method, "path", beet.RedactPath(r.URL.Path), "err", err)
		w.Header().Set("Retry-After", unavailableRetry)
		err = beet.Errorf(beet.EUNAVAILABLE, "a server Beet needs (its database) cannot be reached; try again shortly")
		code = beet.EUNAVAILABLE
	} else if code == beet.EINTERNAL {
		log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", beet.RedactPath(r.URL.Path), "err", err)
	}
	if code == beet.EUNAUTHORIZED {
		w.Header().Set("WWW-Authenticate", `Bearer realm="beet"`)
	}
	SetRetryAfter(w.Header(), err)
	WriteJSON(w, StatusOf(code), ErrorBody{ErrorDetail{Code: code, Message: beet.ErrorMessage(err), Field: beet.ErrorField(err)}})
}

// SetRetryAfter sets Retry-After to the whole seconds, rounded up, until
// a rate-limited request would be taken, when err says how long.
func SetRetryAfter(h http.Header, err error) {
	if d := beet.ErrorRetryAfter(err); d > 0 && beet.ErrorCode(err) == beet.ERATELIMITED {
		h.Set("Retry-After", strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10))
	}
}

// unavailableRetry is the Retry-After of a 503: an outage of the database
// is seconds (a restart, a failover) or longer, and a client that retries
// every few seconds finds it back soon enough without adding much load.
const unavailableRetry = "5"

// unreachable reports whether err is the database (or another server)
// not answering, not a fault in the request or a bug: a connection refused
// or broken, or a dial that timed out.
func unreachable(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF)
}

// DecodeJSON reads r's body into dst strictly: JSON content type, at most
// MaxJSONBody bytes, one object, no unknown fields, and keys in their
// documented case ({"NAME": …} is an unknown field, as any other: encoding/
// json would take it for "name", and the Go 1.26 and 1.27 versions of its
// Decoder cannot be told not to). Its errors are domain errors that name
// the problem (and the field, where there is one).
func DecodeJSON(w http.ResponseWriter, r *http.Request, dst any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return beet.Errorf(beet.EMEDIATYPE, "send the body as application/json, not %q", ct)
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxJSONBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return beet.Errorf(beet.ETOOLARGE, "the body is larger than %d bytes", MaxJSONBody)
	} else if err != nil {
		return beet.Errorf(beet.EINVALID, "could not read the body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return beet.Errorf(beet.EINVALID, "the body is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err, body, dst)
	}
	if dec.More() {
		return beet.Errorf(beet.EINVALID, "the body holds more than one JSON value")
	}
	var v any
	if json.Unmarshal(body, &v) == nil {
		if path, want, ok := wrongCase(v, reflect.TypeOf(dst)); ok {
			return &beet.Error{Code: beet.EINVALID, Field: path, Message: "unknown field " + path + " (did you mean " + want + "?)"}
		}
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// wrongCase finds, in the decoded body v of a value of type t, a key that
// names a field only in another case, and returns its path and the
// field's own name.
func wrongCase(v any, t reflect.Type) (at, want string, ok bool) {
	return findKey(v, t, "", func(t reflect.Type, key string) (reflect.Type, string, bool) {
		if f, ok := fieldOf(t, key, true); ok {
			return f.Type, "", false
		}
		if f, ok := fieldOf(t, key, false); ok {
			return nil, jsonName(f), true
		}
		return nil, "", false
	})
}

// findKey walks the objects of the decoded body v along type t's fields
// and returns the path of the first key that look finds, with what look
// says of it; look gives, for every other key, the type of the field to
// walk into (nil: none). A type that decodes itself is not walked.
func findKey(v any, t reflect.Type, path string, look func(t reflect.Type, key string) (next reflect.Type, said string, found bool)) (string, string, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return "", "", false
	}
	switch v := v.(type) {
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return "", "", false // a map takes any key
		}
		for key, sub := range v {
			next, said, found := look(t, key)
			if found {
				return join(path, key), said, true
			}
			if next != nil {
				if p, said, ok := findKey(sub, next, join(path, key), look); ok {
					return p, said, true
				}
			}
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for i, sub := range v {
				if p, said, ok := findKey(sub, t.Elem(), fmt.Sprintf("%s[%d]", path, i), look); ok {
					return p, said, true
				}
			}
		}
	}
	return "", "", false
}

// jsonName is the key encoding/json writes for the field.
func jsonName(f reflect.StructField) string {
	if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" {
		return tag
	}
	return f.Name
}

func decodeError(err error, body []byte, dst any) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return beet.Errorf(beet.EINVALID, "the body is not valid JSON (at byte %d): %v", syntax.Offset, err)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return beet.Errorf(beet.EINVALID, "the body must be a JSON object, not %s", typ.Value)
		}
		kind := jsonKind(typ.Type.Kind().String())
		if got, isNum := strings.CutPrefix(typ.Value, "number "); isNum && kind == "a number" {
			return &beet.Error{Code: beet.EVALIDATION, Field: field, Message: "must be a whole number, not " + got}
		}
		return &beet.Error{Code: beet.EVALIDATION, Field: field, Message: "must be " + kind + ", not " + typ.Value}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		field := unknownFieldPath(body, reflect.TypeOf(dst), name)
		return &beet.Error{Code: beet.EINVALID, Field: field, Message: "unknown field " + field}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return beet.Errorf(beet.EINVALID, "the body ends in the middle of a JSON value")
	}
	return beet.Errorf(beet.EINVALID, "the body is not valid JSON: %v", err)
}

// unknownFieldPath names the unknown field name of body, decoded into a
// value of type t, with the path to it ("detection.every"): encoding/json
// names the key alone. It walks the objects of body along t's fields and
// returns the path of a key called name that t has no field for, or name
// when the walk does not find one.
func unknownFieldPath(body []byte, t reflect.Type, name string) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return name
	}
	if path, ok := unknownIn(v, t, "", name); ok {
		return path
	}
	return name
}

func unknownIn(v any, t reflect.Type, path, name string) (string, bool) {
	p, _, ok := findKey(v, t, path, func(t reflect.Type, key string) (reflect.Type, string, bool) {
		if f, ok := jsonField(t, key); ok {
			return f.Type, "", false
		}
		return nil, "", key == name
	})
	return p, ok
}

// jsonField finds the field of struct type t that encoding/json decodes
// key into: by its json tag or name, case-insensitively, embedded
// structs' fields included.
func jsonField(t reflect.Type, key string) (reflect.StructField, bool) { return fieldOf(t, key, false) }

// fieldOf is jsonField, matching key exactly when exact is set.
func fieldOf(t reflect.Type, key string, exact bool) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				if ef, ok := fieldOf(et, key, exact); ok {
					return ef, true
				}
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		if tag == key || !exact && strings.EqualFold(tag, key) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	default:
		return "a number"
	}
}

// ClientIP is the client's address: the connection's, or, when that is a
// trusted proxy, the last address in X-Forwarded-For that is not one
// (anyone can prepend addresses to the header; only what the trusted
// proxies appended is believed).
func ClientIP(r *http.Request, proxies []netip.Prefix) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil || !trusted(proxies, addr) {
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0 && i >= len(hops)-20; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // a garbled hop: stop at the last address we could trust
		}
		addr = a
		if !trusted(proxies, a) {
			break
		}
	}
	return addr.String()
}

func trusted(proxies []netip.Prefix, a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
