package beet

import (
	"crypto/rand"
	"hash/crc32"
	"strings"
)

// Secrets are prefixed so that secret scanners recognise a leaked one, and
// end in a checksum so that a mistyped or invented one is refused by its
// shape alone, before any database work (a flood of random tokens costs no
// queries).
const (
	TokenPrefix  = "bt_" // ingestion tokens
	APIKeyPrefix = "bk_" // management API keys

	secretRandomLen   = 22 // base62 characters: 22 × log2(62) ≈ 131 bits
	secretChecksumLen = 6  // base62 CRC-32 of prefix and random part
	secretBodyLen     = secretRandomLen + secretChecksumLen
	TokenLen          = len(TokenPrefix) + secretBodyLen
	APIKeyLen         = len(APIKeyPrefix) + secretBodyLen

	// RedactedLen is how much of a secret may appear in logs and errors.
	RedactedLen = len(TokenPrefix) + 4
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewToken returns a fresh ingestion token from crypto/rand.
func NewToken() string { return newSecret(TokenPrefix) }

// NewAPIKey returns a fresh management API key from crypto/rand.
func NewAPIKey() string { return newSecret(APIKeyPrefix) }

func newSecret(prefix string) string {
	var b strings.Builder
	b.Grow(len(prefix) + secretBodyLen)
	b.WriteString(prefix)
	// Rejection sampling keeps every character uniform: bytes >= 248 would
	// favour the first characters of the alphabet.
	buf := make([]byte, 64)
	for n := 0; n < secretRandomLen; {
		rand.Read(buf) // never fails (crypto/rand panics on a broken source)
		for _, c := range buf {
			if c >= 248 {
				continue
			}
			b.WriteByte(base62[c%62])
			if n++; n == secretRandomLen {
				break
			}
		}
	}
	s := b.String()
	return s + checksum(s)
}

// crc32String is crc32.ChecksumIEEE over a string without converting it to
// a byte slice, which would allocate on the ingestion hot path.
func crc32String(s string) uint32 {
	crc := ^uint32(0)
	for i := 0; i < len(s); i++ {
		crc = crc32.IEEETable[byte(crc)^s[i]] ^ (crc >> 8)
	}
	return ^crc
}

func checksum(s string) string {
	v := crc32String(s)
	var out [secretChecksumLen]byte
	for i := secretChecksumLen - 1; i >= 0; i-- {
		out[i] = base62[v%62]
		v /= 62
	}
	return string(out[:])
}

// ValidTokenShape reports whether s could be an ingestion token: the right
// prefix, length, alphabet and checksum, or a check's UUID that became the
// token of a beet imported from Healthchecks (IsUUIDToken). It allocates
// nothing.
func ValidTokenShape(s string) bool {
	if len(s) == uuidLen {
		return IsUUIDToken(s)
	}
	return validSecretShape(TokenPrefix, s)
}

const uuidLen = 36

// IsUUIDToken reports whether s is a UUID in its canonical lowercase form
// (8-4-4-4-12 hex digits), the shape of a Healthchecks check's ping URL
// ({base}/ping/{uuid}). An imported check keeps its UUID as its beet's
// token, so its clients keep working; a rotation gives the beet a bt_
// token. A UUID has no checksum, but the checksum of a bt_ token is no
// defence against a forger either (CRC-32 is public): it refuses typos,
// and a well-formed unknown token of either shape costs a commit's lookup
// (the ingestion token cache then answers a bt_ token, not a UUID, which
// an import can give to a beet at any moment).
func IsUUIDToken(s string) bool { return uuidShape(s, false) }

// ValidAPIKeyShape reports whether s could be an API key.
func ValidAPIKeyShape(s string) bool { return validSecretShape(APIKeyPrefix, s) }

func validSecretShape(prefix, s string) bool {
	if len(s) != len(prefix)+secretBodyLen || s[:len(prefix)] != prefix {
		return false
	}
	for i := len(prefix); i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	body := s[:len(s)-secretChecksumLen]
	v := crc32String(body)
	for i := len(s) - 1; i >= len(s)-secretChecksumLen; i-- {
		if s[i] != base62[v%62] {
			return false
		}
		v /= 62
	}
	return true
}

// Redact cuts a secret to a prefix that is safe to log: "bt_AbCd…". A short
// string keeps at most half of itself, so no input is ever shown whole.
func Redact(s string) string {
	keep := RedactedLen
	if len(s) < 2*keep {
		keep = len(s) / 2
	}
	return s[:keep] + "…"
}

// The ingestion endpoint's paths; the token follows them. /ping/ is
// Healthchecks' form of the same endpoint.
const (
	ingestPathPrefix = "/api/v1/beet/"
	pingPathPrefix   = "/ping/"
)

// RedactPath cuts secrets out of a URL path for logging: the segment after
// /api/v1/beet/ or /ping/ (whatever its shape, since a mistyped token is
// still nearly a token; under a base path too), and in any segment
// anything from a "bt_" or "bk_" prefix or a UUID on (an imported check's
// token, sent to the wrong path: hc-ping.com's /UUID with the host
// changed) go through beet.Redact.
func RedactPath(p string) string {
	at := tokenAt(p)
	if at < 0 && !strings.Contains(p, "bt_") && !strings.Contains(p, "bk_") && strings.Count(p, "-") < 4 {
		return p // the common case allocates nothing
	}
	tokenSeg := -1
	if at >= 0 {
		tokenSeg = strings.Count(p[:at], "/")
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if s == "" {
			continue
		}
		if i == tokenSeg {
			segs[i] = Redact(s)
			continue
		}
		if j := secretStart(s); j >= 0 {
			segs[i] = s[:j] + Redact(s[j:])
		}
	}
	return strings.Join(segs, "/")
}

// tokenAt is where the ingestion token starts in p, or -1.
func tokenAt(p string) int {
	for _, prefix := range [...]string{ingestPathPrefix, pingPathPrefix} {
		if i := strings.Index(p, prefix); i >= 0 {
			return i + len(prefix)
		}
	}
	return -1
}

// secretStart is where the first secret of a path segment starts (a token,
// an API key or a UUID), or -1.
func secretStart(s string) int {
	first := -1
	for _, i := range [...]int{strings.Index(s, TokenPrefix), strings.Index(s, APIKeyPrefix), uuidStart(s)} {
		if i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	return first
}

// uuidStart is where the first UUID of s (8-4-4-4-12 hex digits, in either
// case) starts, or -1.
func uuidStart(s string) int {
	for i := 0; i+uuidLen <= len(s); i++ {
		if uuidShape(s[i:i+uuidLen], true) {
			return i
		}
	}
	return -1
}

// uuidShape reports whether s is 8-4-4-4-12 hex digits: lower case only
// (a token's canonical form), or either case with anyCase.
func uuidShape(s string, anyCase bool) bool {
	if len(s) != uuidLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if anyCase {
			c |= 0x20 // letters to lower case; '-' and digits keep theirs
		}
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}
