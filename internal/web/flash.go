package web

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
)

// A flash carries a secret to the one page view after a redirect (a new
// API key): the POST redirects, so a refresh cannot create a second key,
// and the page shows the key once. It lives in a short-lived cookie,
// sealed with a key derived from the session cookie, so it needs no
// server state (any instance can open it) and is useless to anyone
// without the session; the page that shows it deletes it.
const (
	flashCookie = "beet_flash"
	flashMaxAge = 120 // seconds: long enough for a slow redirect, not to linger
)

func flashAEAD(session string) cipher.AEAD {
	k := sha256.Sum256([]byte("beet flash\x00" + session))
	block, _ := aes.NewCipher(k[:])
	aead, _ := cipher.NewGCM(block)
	return aead
}

// setFlash seals msg for the next view of the page at path.
func (h *Handler) setFlash(w http.ResponseWriter, r *http.Request, path, msg string) {
	c, err := r.Cookie(h.sessionCookie(r))
	if err != nil {
		return
	}
	aead := flashAEAD(c.Value)
	nonce := make([]byte, aead.NonceSize())
	rand.Read(nonce)
	sealed := aead.Seal(nonce, nonce, []byte(msg), []byte(path))
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: base64.RawURLEncoding.EncodeToString(sealed),
		Path: h.prefix + path, MaxAge: flashMaxAge, HttpOnly: true, Secure: h.secureRequest(r), SameSite: http.SameSiteStrictMode})
}

// takeFlash opens and deletes the flash for path; "" when there is none.
func (h *Handler) takeFlash(w http.ResponseWriter, r *http.Request, path string) string {
	fc, err := r.Cookie(flashCookie)
	if err != nil {
		return ""
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: "", Path: h.prefix + path, MaxAge: -1,
		HttpOnly: true, Secure: h.secureRequest(r), SameSite: http.SameSiteStrictMode})
	sc, err := r.Cookie(h.sessionCookie(r))
	if err != nil {
		return ""
	}
	sealed, err := base64.RawURLEncoding.DecodeString(fc.Value)
	aead := flashAEAD(sc.Value)
	if err != nil || len(sealed) < aead.NonceSize() {
		return ""
	}
	msg, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], []byte(path))
	if err != nil {
		return ""
	}
	return string(msg)
}
