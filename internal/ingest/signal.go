package ingest

import (
	"net/url"
	"strings"

	"github.com/beethq/beet"
)

// signal is what the path after the token asks for: {token} pings,
// {token}/start, /fail, /log, and /{exit code} (0-255, 0 is success).
type signal struct {
	kind beet.EventKind
	code *int
}

// signalOf reads the path after the token ("" for the plain endpoint). ok
// is false for anything else ("/stat", "/256", "/start/x").
func signalOf(suffix string) (s signal, ok bool) {
	switch suffix {
	case "":
		return signal{kind: beet.KindPing}, true
	case "start":
		return signal{kind: beet.KindStart}, true
	case "fail":
		return signal{kind: beet.KindFail}, true
	case "log":
		return signal{kind: beet.KindLog}, true
	}
	if len(suffix) > 3 || suffix[0] >= 'A' && suffix[0] <= 'Z' {
		return killedBy(suffix)
	}
	code := 0
	for i := 0; i < len(suffix); i++ {
		c := suffix[i]
		if c < '0' || c > '9' {
			return signal{}, false
		}
		code = 10*code + int(c-'0')
	}
	if code > beet.MaxExitCode {
		return signal{}, false
	}
	s.code = &code
	s.kind = beet.KindFail
	if code == 0 {
		s.kind = beet.KindPing
	}
	return s, true
}

// signalNumbers are Linux's signal numbers by the names systemd puts in
// ${EXIT_STATUS} when a service was killed ("TERM", "KILL", "SEGV").
var signalNumbers = map[string]int{
	"HUP": 1, "INT": 2, "QUIT": 3, "ILL": 4, "TRAP": 5, "ABRT": 6, "BUS": 7, "FPE": 8, "KILL": 9, "USR1": 10,
	"SEGV": 11, "USR2": 12, "PIPE": 13, "ALRM": 14, "TERM": 15, "STKFLT": 16, "CHLD": 17, "CONT": 18, "STOP": 19,
	"TSTP": 20, "TTIN": 21, "TTOU": 22, "URG": 23, "XCPU": 24, "XFSZ": 25, "VTALRM": 26, "PROF": 27, "WINCH": 28,
	"IO": 29, "PWR": 30, "SYS": 31,
}

// killedBy reads a signal's name (systemd's ExecStopPost=curl …/${EXIT_STATUS}
// of a killed service, "TERM" or "SIGTERM") as a failure with the exit
// code a shell reports for it, 128 + its number (143 for TERM). A killed
// job failed: recording nothing would leave its run open.
func killedBy(suffix string) (signal, bool) {
	n, ok := signalNumbers[strings.TrimPrefix(suffix, "SIG")]
	if !ok {
		return signal{}, false
	}
	code := 128 + n
	return signal{kind: beet.KindFail, code: &code}, true
}

// runID finds rid= in a raw query string (?rid=<uuid>, as Healthchecks
// takes it) and returns it in canonical lowercase form. ok is false when
// rid is there but no UUID; a query without rid gives "", true. Other
// parameters (cache-busters) are ignored. The forms Python's uuid.UUID
// takes are accepted: hyphens or not, any case, braces, a urn:uuid: prefix.
func runID(rawQuery string) (rid string, ok bool) {
	for q := rawQuery; q != ""; {
		var kv string
		kv, q, _ = strings.Cut(q, "&")
		v, found := strings.CutPrefix(kv, "rid=")
		if !found {
			continue
		}
		if strings.Contains(v, "%") {
			u, err := url.QueryUnescape(v)
			if err != nil {
				return "", false
			}
			v = u
		}
		return canonicalUUID(v)
	}
	return "", true
}

// canonicalUUID returns s as a lowercase 8-4-4-4-12 UUID, or ok false.
func canonicalUUID(s string) (string, bool) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "urn:"), "uuid:")
	if len(s) > 2 && s[0] == '{' && s[len(s)-1] == '}' {
		s = s[1 : len(s)-1]
	}
	if beet.IsUUIDToken(s) {
		return s, true // the usual form: no allocation
	}
	var hex [32]byte
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '-' && (len(s) == 36 && (i == 8 || i == 13 || i == 18 || i == 23)):
			continue
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		case 'A' <= c && c <= 'F':
			c += 'a' - 'A'
		default:
			return "", false
		}
		if n == len(hex) {
			return "", false
		}
		hex[n] = c
		n++
	}
	if n != len(hex) || len(s) != 32 && len(s) != 36 {
		return "", false
	}
	h := string(hex[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], true
}
