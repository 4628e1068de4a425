package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/secretbox"
	"github.com/beethq/beet/internal/sqlstore"
)

// TestSecretKeyLifecycle drives BEET_SECRET_KEY through the binary's
// commands: a malformed key is refused at start with the setting named
// and the value not shown; the first start with a key seals the plain
// secrets an install had; a wrong key refuses to start with a sentence
// naming the key that is needed; `beet secrets rotate` moves every secret
// to a new key, after which the old one is not needed; `beet config check`
// warns when no key is set.
func TestSecretKeyLifecycle(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "beet.db")
	dbURL := "sqlite://" + path
	const secret = "whsec-cli-Hq8Vt2"

	db, err := sqlstore.Open(ctx, dbURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	a := beet.Account{Plan: beet.PlanFree}
	if err := db.CreateAccount(ctx, &a, &beet.User{Email: "ops@example.com", PasswordHash: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateChannel(ctx, &beet.Channel{AccountID: a.ID, Kind: beet.ChannelWebhook, Name: "hook",
		Config: beet.ChannelConfig{URL: "https://hooks.example.com/x", Secret: secret}}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	newKey := func() (string, string) {
		raw := make([]byte, 32)
		rand.Read(raw)
		s := base64.StdEncoding.EncodeToString(raw)
		k, _ := secretbox.ParseKey(s)
		return s, k.ID()
	}
	k1, id1 := newKey()
	k2, id2 := newKey()
	beetCmd := func(env map[string]string, args ...string) (int, string, string) {
		t.Helper()
		getenv := func(k string) string {
			if k == "BEET_DATABASE_URL" {
				return dbURL
			}
			return env[k]
		}
		var stdout, stderr bytes.Buffer
		code := run(ctx, args, getenv, strings.NewReader(""), &stdout, &stderr)
		for _, key := range []string{k1, k2, secret} {
			if strings.Contains(stdout.String()+stderr.String(), key) {
				t.Errorf("beet %s printed a key or secret whole:\n%s%s", strings.Join(args, " "), stdout.String(), stderr.String())
			}
		}
		return code, stdout.String(), stderr.String()
	}
	fileHasSecret := func() bool {
		b, _ := os.ReadFile(path)
		w, _ := os.ReadFile(path + "-wal")
		return bytes.Contains(append(b, w...), []byte(secret))
	}
	if !fileHasSecret() {
		t.Fatal("without a key the secret should be in the file as given (the documented choice)")
	}

	// Malformed keys: a configuration error (exit 2, as every bad setting)
	// naming the setting, not the value.
	for _, bad := range []string{"too-short", base64.StdEncoding.EncodeToString(make([]byte, 16))} {
		code, _, errOut := beetCmd(map[string]string{"BEET_SECRET_KEY": bad}, "accounts", "list")
		if code != 2 || !strings.Contains(errOut, "BEET_SECRET_KEY (--secret-key)") || strings.Contains(errOut, bad) ||
			strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("BEET_SECRET_KEY=%q: exit %d, %q; want one line naming the setting, not the value", bad, code, errOut)
		}
	}
	if code, _, errOut := beetCmd(map[string]string{"BEET_SECRET_KEY_OLD": k1}, "accounts", "list"); code != 2 || !strings.Contains(errOut, "needs BEET_SECRET_KEY") {
		t.Errorf("BEET_SECRET_KEY_OLD alone: exit %d, %q", code, errOut)
	}
	if code, _, errOut := beetCmd(map[string]string{"BEET_SECRET_KEY": k1, "BEET_SECRET_KEY_OLD": "short"}, "accounts", "list"); code != 2 ||
		strings.Count(errOut, "BEET_SECRET_KEY_OLD") != 1 || !strings.Contains(errOut, "key 1 is not base64") {
		t.Errorf("a bad old key: exit %d, %q; want the setting named once", code, errOut)
	}

	// The first start with a key seals what was there.
	if code, _, errOut := beetCmd(map[string]string{"BEET_SECRET_KEY": k1}, "accounts", "list"); code != 0 {
		t.Fatalf("first start with a key: exit %d, %s", code, errOut)
	}
	if fileHasSecret() {
		t.Error("after the first start with a key the file still holds the secret in plain text")
	}

	// A wrong key, or none, refuses to start, saying which key is needed.
	code, _, errOut := beetCmd(map[string]string{"BEET_SECRET_KEY": k2}, "accounts", "list")
	if code != 1 || !strings.Contains(errOut, "channel secrets") || !strings.Contains(errOut, "key "+id1) || !strings.Contains(errOut, "BEET_SECRET_KEY_OLD") {
		t.Errorf("wrong key: exit %d, %q; want an error naming key %s", code, errOut, id1)
	}
	code, _, errOut = beetCmd(nil, "accounts", "list")
	if code != 1 || !strings.Contains(errOut, "BEET_SECRET_KEY is not set") {
		t.Errorf("no key: exit %d, %q", code, errOut)
	}

	// Rotation: new key current, old key listed; then the new key alone.
	if code, _, errOut := beetCmd(nil, "secrets", "rotate"); code != 2 {
		t.Errorf("secrets rotate without a key: exit %d, %q; want a usage error", code, errOut)
	}
	code, out, errOut := beetCmd(map[string]string{"BEET_SECRET_KEY": k2, "BEET_SECRET_KEY_OLD": k1}, "secrets", "rotate")
	var rep struct {
		Key                        string
		Channels, Sealed, Resealed int
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Key != id2 || rep.Channels != 1 || rep.Resealed != 1 {
		t.Fatalf("secrets rotate: exit %d, %q %q; want key %s, 1 channel resealed", code, out, errOut, id2)
	}
	if code, _, errOut := beetCmd(map[string]string{"BEET_SECRET_KEY": k2}, "accounts", "list"); code != 0 {
		t.Errorf("the new key alone after rotating: exit %d, %s", code, errOut)
	}
	if code, _, _ := beetCmd(map[string]string{"BEET_SECRET_KEY": k1}, "accounts", "list"); code != 1 {
		t.Errorf("the old key alone after rotating: exit %d, want 1", code)
	}

	// config check warns without a key, not with one.
	if _, out, _ := beetCmd(nil, "config", "check"); !strings.Contains(out, "warning: BEET_SECRET_KEY is not set") {
		t.Errorf("config check without a key does not warn:\n%s", out)
	}
	if _, out, _ := beetCmd(map[string]string{"BEET_SECRET_KEY": k2}, "config", "check"); strings.Contains(out, "BEET_SECRET_KEY is not set") ||
		!strings.Contains(out, "BEET_SECRET_KEY ") {
		t.Errorf("config check with a key:\n%s", out)
	}
}
