// Package secretbox seals channel secrets at rest (docs/SECURITY.md,
// "Secrets at rest") with AES-256-GCM under a key from the environment.
//
// A sealed value is text, so it fits where the plain value was:
//
//	enc:v1:<key id>:<base64url(nonce ‖ ciphertext ‖ tag)>
//
// v1 is the format; the key id is a fingerprint of the key that sealed it
// (8 hex digits of a SHA-256, which says nothing about the key), so a value
// names its key and a keyring of the current and previous keys can open
// values from before a rotation. The caller's associated data (the channel
// ID and field) binds a value to its row: copied into another row, it does
// not open.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Prefix starts every sealed value.
const Prefix = "enc:v1:"

// KeyLen is the length of a key: AES-256.
const KeyLen = 32

// Key is one AES-256 key and its fingerprint.
type Key struct {
	id   string
	aead cipher.AEAD
}

// ID is the key's fingerprint, as it appears in the values it seals.
func (k *Key) ID() string { return k.id }

// ParseKey reads a key as BEET_SECRET_KEY holds it: 32 bytes in base64
// (standard or URL alphabet, padded or not), as `openssl rand -base64 32`
// prints. The error never contains the text.
func ParseKey(s string) (*Key, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("is empty")
	}
	var raw []byte
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			raw = b
			break
		}
	}
	switch {
	case raw == nil:
		return nil, errors.New("is not base64; make one with: openssl rand -base64 32")
	case len(raw) != KeyLen:
		return nil, fmt.Errorf("decodes to %d bytes, want %d random bytes; make one with: openssl rand -base64 32", len(raw), KeyLen)
	}
	return newKey(raw)
}

func newKey(raw []byte) (*Key, error) {
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(append([]byte("beet secretbox key id\x00"), raw...))
	return &Key{id: hex.EncodeToString(sum[:4]), aead: aead}, nil
}

// Keyring seals with its current key and opens with any of its keys.
type Keyring struct {
	current *Key
	byID    map[string]*Key
}

// NewKeyring returns a keyring sealing with current and opening with it
// and the old keys (the ones in use before a rotation).
func NewKeyring(current *Key, old ...*Key) (*Keyring, error) {
	if current == nil {
		return nil, errors.New("secretbox: no current key")
	}
	r := &Keyring{current: current, byID: map[string]*Key{current.id: current}}
	for _, k := range old {
		if k != nil && r.byID[k.id] == nil { // the current key listed among the old is harmless
			r.byID[k.id] = k
		}
	}
	return r, nil
}

// Current is the key new values are sealed with.
func (r *Keyring) Current() *Key { return r.current }

// IsSealed reports whether s is a sealed value (of any key).
func IsSealed(s string) bool { return strings.HasPrefix(s, Prefix) }

// KeyID returns the id of the key that sealed s, or "" when s is not sealed.
func KeyID(s string) string {
	if !IsSealed(s) {
		return ""
	}
	id, _, _ := strings.Cut(s[len(Prefix):], ":")
	return id
}

// Seal encrypts plain under the current key, bound to ad. The empty
// string stays empty: there is nothing to hide, and "no secret" must
// still read as none.
func (r *Keyring) Seal(plain string, ad []byte) (string, error) {
	if plain == "" {
		return "", nil
	}
	k := r.current
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := k.aead.Seal(nonce, nonce, []byte(plain), ad)
	return Prefix + k.id + ":" + base64.RawURLEncoding.EncodeToString(out), nil
}

// ErrUnknownKey means a value was sealed by a key the keyring lacks.
var ErrUnknownKey = errors.New("sealed with a key that is neither BEET_SECRET_KEY nor in BEET_SECRET_KEY_OLD")

// ErrCorrupt means a value names a known key but does not open: it was
// changed, cut, or moved from another row.
var ErrCorrupt = errors.New("does not decrypt: changed, cut or copied from another row")

// Open decrypts a sealed value bound to ad. A value that is not sealed is
// returned as it is (rows written before a key was set). Errors say which
// key a value needs, never the value.
func (r *Keyring) Open(s string, ad []byte) (string, error) {
	if !IsSealed(s) {
		return s, nil
	}
	id, body, ok := strings.Cut(s[len(Prefix):], ":")
	if !ok {
		return "", ErrCorrupt
	}
	var k *Key
	if r != nil {
		k = r.byID[id]
	}
	if k == nil {
		return "", fmt.Errorf("key %s: %w", id, ErrUnknownKey)
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil || len(raw) < k.aead.NonceSize()+k.aead.Overhead() {
		return "", fmt.Errorf("key %s: %w", id, ErrCorrupt)
	}
	n := k.aead.NonceSize()
	plain, err := k.aead.Open(nil, raw[:n], raw[n:], ad)
	if err != nil {
		return "", fmt.Errorf("key %s: %w", id, ErrCorrupt)
	}
	return string(plain), nil
}
