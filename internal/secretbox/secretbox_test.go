package secretbox

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func newTestKey(t testing.TB) (*Key, string) {
	t.Helper()
	raw := make([]byte, KeyLen)
	rand.Read(raw)
	text := base64.StdEncoding.EncodeToString(raw)
	k, err := ParseKey(text)
	if err != nil {
		t.Fatal(err)
	}
	return k, text
}

func TestParseKey(t *testing.T) {
	raw := make([]byte, KeyLen)
	rand.Read(raw)
	// The forms `openssl rand -base64 32` and friends print all name the same key.
	var ids []string
	for _, s := range []string{
		base64.StdEncoding.EncodeToString(raw),
		base64.RawStdEncoding.EncodeToString(raw),
		base64.URLEncoding.EncodeToString(raw),
		" " + base64.RawURLEncoding.EncodeToString(raw) + "\n",
	} {
		k, err := ParseKey(s)
		if err != nil {
			t.Fatalf("ParseKey(%q): %v", s, err)
		}
		ids = append(ids, k.ID())
	}
	for _, id := range ids[1:] {
		if id != ids[0] || len(id) != 8 {
			t.Fatalf("key ids %v: want one 8-digit id", ids)
		}
	}
	secret := "c2VjcmV0LXNlY3JldC1zZWNyZXQ" // base64 of 20 bytes
	for in, want := range map[string]string{
		"":                   "is empty",
		"not base64 at all!": "is not base64",
		secret:               "decodes to 20 bytes, want 32",
		base64.StdEncoding.EncodeToString(make([]byte, 64)): "decodes to 64 bytes",
	} {
		_, err := ParseKey(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseKey(%q) = %v, want an error saying %q", in, err, want)
		}
		if err != nil && in != "" && strings.Contains(err.Error(), strings.TrimSpace(in)) {
			t.Errorf("ParseKey's error shows the key: %v", err)
		}
	}
}

func TestSealOpen(t *testing.T) {
	k, _ := newTestKey(t)
	r, _ := NewKeyring(k)
	ad := []byte("beet channel 7 config.secret")
	const plain = "whsec_hunter2"
	a, err := r.Seal(plain, ad)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := r.Seal(plain, ad)
	if !strings.HasPrefix(a, Prefix+k.ID()+":") || strings.Contains(a, plain) || a == b {
		t.Fatalf("sealed %q, %q: want enc:v1:<id>: prefixes, no plain text, a fresh nonce each time", a, b)
	}
	if got, err := r.Open(a, ad); err != nil || got != plain {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if s, _ := r.Seal("", ad); s != "" {
		t.Errorf("Seal(\"\") = %q, want empty: no secret stays no secret", s)
	}
	if got, err := r.Open("https://hooks.example.com/x", ad); err != nil || got != "https://hooks.example.com/x" {
		t.Errorf("a plain value (a row from before the key) = %q, %v; want it as it is", got, err)
	}

	// Moved to another row or field: does not open.
	if got, err := r.Open(a, []byte("beet channel 8 config.secret")); !errors.Is(err, ErrCorrupt) || got != "" {
		t.Errorf("opened with another row's data: %q, %v; want ErrCorrupt", got, err)
	}
	// Changed: does not open, and the error is not garbage or the value.
	flip := []byte(a)
	flip[len(flip)-3] ^= 1
	if got, err := r.Open(string(flip), ad); !errors.Is(err, ErrCorrupt) || got != "" {
		t.Errorf("opened a changed value: %q, %v", got, err)
	}
	for _, cut := range []string{Prefix, Prefix + k.ID(), Prefix + k.ID() + ":", Prefix + k.ID() + ":AAAA", a[:len(a)-10]} {
		if _, err := r.Open(cut, ad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Open(%q) = %v, want ErrCorrupt", cut, err)
		}
	}

	// Another key: a clear error naming the key the value needs.
	other, _ := newTestKey(t)
	wrong, _ := NewKeyring(other)
	got, err := wrong.Open(a, ad)
	if !errors.Is(err, ErrUnknownKey) || got != "" || !strings.Contains(err.Error(), k.ID()) {
		t.Errorf("wrong key: %q, %v; want ErrUnknownKey naming key %s", got, err, k.ID())
	}
	if _, err := (*Keyring)(nil).Open(a, ad); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("no keyring: %v, want ErrUnknownKey", err)
	}
}

// TestRotation: a keyring with the new key and the old one opens values
// of both and seals with the new one only.
func TestRotation(t *testing.T) {
	oldK, _ := newTestKey(t)
	newK, _ := newTestKey(t)
	before, _ := NewKeyring(oldK)
	ad := []byte("x")
	v, _ := before.Seal("s3cret", ad)
	during, _ := NewKeyring(newK, oldK, newK)
	if got, err := during.Open(v, ad); err != nil || got != "s3cret" {
		t.Fatalf("rotating keyring opens the old value: %q, %v", got, err)
	}
	w, _ := during.Seal("s3cret", ad)
	if KeyID(w) != newK.ID() || KeyID(v) != oldK.ID() {
		t.Fatalf("key ids %s, %s; want %s then %s", KeyID(v), KeyID(w), oldK.ID(), newK.ID())
	}
	after, _ := NewKeyring(newK)
	if _, err := after.Open(v, ad); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("the new key alone opened an old value: %v", err)
	}
	if got, err := after.Open(w, ad); err != nil || got != "s3cret" {
		t.Errorf("the new key alone: %q, %v", got, err)
	}
}

// FuzzOpen: any text given to Open (a corrupted column, a hostile row)
// gives the plain value, the text back, or an error; never a panic, and a
// sealed value of the keyring round-trips.
func FuzzOpen(f *testing.F) {
	raw := make([]byte, KeyLen)
	for i := range raw {
		raw[i] = byte(i)
	}
	k, _ := newKey(raw)
	r, _ := NewKeyring(k)
	sealed, _ := r.Seal("https://hooks.slack.com/services/T0/B0/xyz", []byte("ad"))
	f.Add(sealed, "ad")
	f.Add("enc:v1:", "")
	f.Add("enc:v1:"+k.ID()+":", "ad")
	f.Add("enc:v1:deadbeef:AAAA", "ad")
	f.Add("https://example.com", "")
	f.Fuzz(func(t *testing.T, s, ad string) {
		got, err := r.Open(s, []byte(ad))
		if !IsSealed(s) && (err != nil || got != s) {
			t.Fatalf("plain %q: %q, %v", s, got, err)
		}
		if err != nil && got != "" {
			t.Fatalf("an error and a value: %q, %v", got, err)
		}
		if IsSealed(s) {
			return
		}
		again, err := r.Seal(s, []byte(ad))
		if err != nil {
			t.Fatal(err)
		}
		if back, err := r.Open(again, []byte(ad)); err != nil || back != s {
			t.Fatalf("round trip of %q: %q, %v", s, back, err)
		}
	})
}
