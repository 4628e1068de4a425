package sqlstore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/secretbox"
	"github.com/beethq/beet/internal/sqlstore"
	"github.com/beethq/beet/internal/testdb"
)

func testKey(t *testing.T) *secretbox.Key {
	t.Helper()
	raw := make([]byte, secretbox.KeyLen)
	rand.Read(raw)
	k, err := secretbox.ParseKey(base64.StdEncoding.EncodeToString(raw))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func keyring(t *testing.T, cur *secretbox.Key, old ...*secretbox.Key) *secretbox.Keyring {
	t.Helper()
	r, err := secretbox.NewKeyring(cur, old...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The secrets of each kind that holds one: a webhook's URL and HMAC
// secret, a chat URL with its token in the path, a PagerDuty key.
var channelSecrets = []struct {
	kind    beet.ChannelKind
	cfg     beet.ChannelConfig
	secrets []string
}{
	{beet.ChannelWebhook, beet.ChannelConfig{URL: "https://hooks.example.com/wh-path-Qx7", Secret: "whsec-Zr4Tq9Lm2"}, []string{"wh-path-Qx7", "whsec-Zr4Tq9Lm2"}},
	{beet.ChannelSlack, beet.ChannelConfig{URL: "https://hooks.slack.com/services/T0AAA/B0BBB/slackTokVw8"}, []string{"slackTokVw8"}},
	{beet.ChannelPagerDuty, beet.ChannelConfig{RoutingKey: "pdKey0123456789abcdef0123456789ab"}, []string{"pdKey0123456789abcdef0123456789ab"}},
}

func createSecretChannels(t *testing.T, db *sqlstore.DB) (beet.Account, []*beet.Channel) {
	t.Helper()
	ctx := context.Background()
	a := beet.Account{Plan: beet.PlanFree}
	u := beet.User{Email: "ops-" + rand.Text()[:8] + "@example.com", PasswordHash: "x"}
	if err := db.CreateAccount(ctx, &a, &u); err != nil {
		t.Fatal(err)
	}
	var out []*beet.Channel
	for _, cs := range channelSecrets {
		c := &beet.Channel{AccountID: a.ID, Kind: cs.kind, Name: string(cs.kind), Config: cs.cfg}
		if err := db.CreateChannel(ctx, c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return a, out
}

// rawChannels is the channels table as the database holds it, read past
// the store: every column of every row as text.
func rawChannels(t *testing.T, databaseURL string) string {
	t.Helper()
	raw := rawDB(t, databaseURL)
	rows, err := raw.Query(`SELECT id, account_id, kind, name, config, failing_reason FROM channels ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, account int64
		var kind, name, cfg, reason string
		if err := rows.Scan(&id, &account, &kind, &name, &cfg, &reason); err != nil {
			t.Fatal(err)
		}
		b.WriteString(strings.Join([]string{kind, name, cfg, reason}, " | ") + "\n")
	}
	return b.String()
}

// sqliteFiles is every byte SQLite keeps for the database: the main file,
// its write-ahead log and shared memory.
func sqliteFiles(t *testing.T, databaseURL string) []byte {
	t.Helper()
	path := strings.TrimPrefix(databaseURL, "sqlite://")
	var all []byte
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		b, err := os.ReadFile(f)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	if len(all) == 0 {
		t.Fatalf("no database files at %s", filepath.Dir(path))
	}
	return all
}

func assertNoPlainSecrets(t *testing.T, what, databaseURL string) {
	t.Helper()
	rows := rawChannels(t, databaseURL)
	if !strings.Contains(rows, secretbox.Prefix) {
		t.Errorf("%s: no sealed value in the rows:\n%s", what, rows)
	}
	var files []byte
	if strings.HasPrefix(databaseURL, "sqlite://") {
		files = sqliteFiles(t, databaseURL)
	}
	for _, cs := range channelSecrets {
		for _, s := range cs.secrets {
			if strings.Contains(rows, s) {
				t.Errorf("%s: the channels table holds %q in plain text:\n%s", what, s, rows)
			}
			if bytes.Contains(files, []byte(s)) {
				t.Errorf("%s: the SQLite files hold %q in plain text", what, s)
			}
		}
	}
}

// TestChannelSecretsSealedAtRest: with a key, no channel secret reaches the
// database in plain text (rows on both engines; on SQLite every byte of the
// file, its WAL and shared memory), and the store reads back the secrets as
// set. Both engines.
func TestChannelSecretsSealedAtRest(t *testing.T) { testdb.Each(t, testChannelSecretsSealedAtRest) }

func testChannelSecretsSealedAtRest(t *testing.T, engine string) {
	ctx := context.Background()
	url := testdb.URL(t, engine)
	db := testdb.Open(t, url)
	db.SetSecretKeys(keyring(t, testKey(t)))
	_, chans := createSecretChannels(t, db)
	// A change seals the new value too.
	newSecret := "whsec-changed-Pw3"
	if _, err := db.UpdateChannel(ctx, chans[0].ID, beet.ChannelUpdate{Config: &beet.ChannelConfig{URL: chans[0].Config.URL, Secret: newSecret}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	assertNoPlainSecrets(t, "after create and update", url)
	if rows := rawChannels(t, url); strings.Contains(rows, newSecret) {
		t.Errorf("the updated secret is in plain text:\n%s", rows)
	}
	for i, c := range chans {
		got, err := db.FindChannelByID(ctx, c.ID)
		want := channelSecrets[i].cfg
		if i == 0 {
			want.Secret = newSecret
		}
		if err != nil || got.Config != want {
			t.Errorf("channel %s read back as %+v, %v; want %+v", c.Kind, got, err, want)
		}
	}
	all, err := db.FindChannels(ctx, chans[0].AccountID)
	if err != nil || len(all) != len(chans) || all[1].Config != channelSecrets[1].cfg {
		t.Errorf("FindChannels = %+v, %v", all, err)
	}
	// An email address is no secret: it stays readable (and searchable).
	em := &beet.Channel{AccountID: chans[0].AccountID, Kind: beet.ChannelEmail, Name: "mail", Config: beet.ChannelConfig{To: "ops@example.com"}}
	if err := db.CreateChannel(ctx, em); err != nil {
		t.Fatal(err)
	}
	if rows := rawChannels(t, url); !strings.Contains(rows, "ops@example.com") {
		t.Errorf("the email address is sealed:\n%s", rows)
	}
}

// TestChannelSecretsMigratedOnStart: rows written without a key are sealed
// by the first start with one, and the plain text is gone from the rows
// (and, on SQLite, from every byte of the files). Both engines.
func TestChannelSecretsMigratedOnStart(t *testing.T) {
	testdb.Each(t, testChannelSecretsMigratedOnStart)
}

func testChannelSecretsMigratedOnStart(t *testing.T, engine string) {
	ctx := context.Background()
	url := testdb.URL(t, engine)
	db := testdb.Open(t, url)
	_, chans := createSecretChannels(t, db)
	rep, err := db.SealChannelSecrets(ctx, false)
	if err != nil || rep.Plain != len(chans) || rep.Sealed != 0 {
		t.Fatalf("without a key: %+v, %v; want %d plain rows, nothing sealed", rep, err, len(chans))
	}
	if rows := rawChannels(t, url); !strings.Contains(rows, "whsec-Zr4Tq9Lm2") {
		t.Fatalf("without a key the secret should be stored as given (the documented choice):\n%s", rows)
	}

	db.SetSecretKeys(keyring(t, testKey(t)))
	rep, err = db.SealChannelSecrets(ctx, false)
	if err != nil || rep.Sealed != len(chans) || rep.Channels != len(chans) {
		t.Fatalf("first start with a key: %+v, %v; want %d sealed", rep, err, len(chans))
	}
	assertNoPlainSecrets(t, "after the first start with a key", url)
	if rep, err := db.SealChannelSecrets(ctx, false); err != nil || rep.Sealed != 0 || rep.Resealed != 0 {
		t.Errorf("second start: %+v, %v; want nothing to do", rep, err)
	}
	for i, c := range chans {
		if got, err := db.FindChannelByID(ctx, c.ID); err != nil || got.Config != channelSecrets[i].cfg {
			t.Errorf("channel %s after sealing: %+v, %v", c.Kind, got, err)
		}
	}
}

// TestChannelSecretsSealedWhileCheckpointing: the start-up sealing empties
// the WAL even while another connection is checkpointing it (as the
// background checkpointer does twice a second), which makes SQLite answer
// the sealing's own checkpoint busy at once. SQLite only.
func TestChannelSecretsSealedWhileCheckpointing(t *testing.T) {
	ctx := context.Background()
	url := testdb.URL(t, "sqlite")
	db := testdb.Open(t, url)
	createSecretChannels(t, db)
	other, err := rawDB(t, url).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			other.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
		}
	}()
	db.SetSecretKeys(keyring(t, testKey(t)))
	rep, err := db.SealChannelSecrets(ctx, false)
	close(stop)
	<-done
	if err != nil || rep.Sealed == 0 {
		t.Fatalf("sealing: %+v, %v", rep, err)
	}
	assertNoPlainSecrets(t, "after sealing beside a checkpointing connection", url)
}

// TestChannelSecretsWrongKey: a wrong key, no key, or a value moved to
// another row gives a clear error naming the key the value needs (never
// garbage, never the value), at start-up and on every read. Both engines.
func TestChannelSecretsWrongKey(t *testing.T) { testdb.Each(t, testChannelSecretsWrongKey) }

func testChannelSecretsWrongKey(t *testing.T, engine string) {
	ctx := context.Background()
	url := testdb.URL(t, engine)
	db := testdb.Open(t, url)
	right := testKey(t)
	db.SetSecretKeys(keyring(t, right))
	_, chans := createSecretChannels(t, db)

	noLeak := func(what string, err error) {
		t.Helper()
		for _, cs := range channelSecrets {
			for _, s := range cs.secrets {
				if err != nil && strings.Contains(err.Error(), s) {
					t.Errorf("%s: the error shows a secret: %v", what, err)
				}
			}
		}
	}
	wrong := testKey(t)
	db.SetSecretKeys(keyring(t, wrong))
	_, err := db.SealChannelSecrets(ctx, false)
	var ke *sqlstore.SecretKeyError
	if !errors.As(err, &ke) || !errors.Is(err, secretbox.ErrUnknownKey) || !strings.Contains(err.Error(), right.ID()) ||
		!strings.Contains(err.Error(), "BEET_SECRET_KEY") {
		t.Errorf("start with a wrong key: %v; want a SecretKeyError naming key %s and BEET_SECRET_KEY", err, right.ID())
	}
	noLeak("start with a wrong key", err)
	got, err := db.FindChannelByID(ctx, chans[0].ID)
	if err == nil || got != nil || !strings.Contains(err.Error(), right.ID()) {
		t.Errorf("read with a wrong key: %+v, %v; want an error naming key %s", got, err, right.ID())
	}
	noLeak("read with a wrong key", err)

	db.SetSecretKeys(nil)
	_, err = db.SealChannelSecrets(ctx, false)
	if !errors.As(err, &ke) || !strings.Contains(err.Error(), "BEET_SECRET_KEY is not set") {
		t.Errorf("start without the key: %v; want a SecretKeyError saying BEET_SECRET_KEY is not set", err)
	}
	noLeak("start without the key", err)

	// A sealed value copied into another row does not open there.
	db.SetSecretKeys(keyring(t, right))
	moved := rawConfig(t, url, chans[0].ID)
	setRawConfig(t, url, chans[1].ID, moved)
	if got, err := db.FindChannelByID(ctx, chans[1].ID); !errors.Is(err, secretbox.ErrCorrupt) || got != nil {
		t.Errorf("a sealed config moved to another row: %+v, %v; want ErrCorrupt", got, err)
	}
	setRawConfig(t, url, chans[1].ID, `{"url":"enc:v1:`+right.ID()+`:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}`)
	if _, err := db.SealChannelSecrets(ctx, false); !errors.As(err, &ke) || !errors.Is(err, secretbox.ErrCorrupt) {
		t.Errorf("start with a changed value: %v; want ErrCorrupt", err)
	}
}

// TestChannelSecretsRotate: with the new key current and the old one in
// BEET_SECRET_KEY_OLD, every secret reads; the rotate pass reseals them
// all under the new key, after which the old key is not needed. Both
// engines.
func TestChannelSecretsRotate(t *testing.T) { testdb.Each(t, testChannelSecretsRotate) }

func testChannelSecretsRotate(t *testing.T, engine string) {
	ctx := context.Background()
	url := testdb.URL(t, engine)
	db := testdb.Open(t, url)
	oldK, newK := testKey(t), testKey(t)
	db.SetSecretKeys(keyring(t, oldK))
	_, chans := createSecretChannels(t, db)

	db.SetSecretKeys(keyring(t, newK, oldK))
	if rep, err := db.SealChannelSecrets(ctx, false); err != nil || rep.Resealed != 0 {
		t.Fatalf("start during a rotation: %+v, %v; want the old values read, none rewritten", rep, err)
	}
	rep, err := db.SealChannelSecrets(ctx, true)
	if err != nil || rep.Resealed != len(chans) {
		t.Fatalf("rotate: %+v, %v; want %d resealed", rep, err, len(chans))
	}
	if rows := rawChannels(t, url); strings.Contains(rows, oldK.ID()) || !strings.Contains(rows, newK.ID()) {
		t.Errorf("after rotating, the rows name key %s, not %s:\n%s", oldK.ID(), newK.ID(), rows)
	}
	assertNoPlainSecrets(t, "after rotating", url)
	db.SetSecretKeys(keyring(t, newK))
	for i, c := range chans {
		if got, err := db.FindChannelByID(ctx, c.ID); err != nil || got.Config != channelSecrets[i].cfg {
			t.Errorf("channel %s with the new key alone: %+v, %v", c.Kind, got, err)
		}
	}
}

func rawDB(t *testing.T, databaseURL string) *sql.DB {
	t.Helper()
	driver, dsn := "pgx", databaseURL
	if p, ok := strings.CutPrefix(databaseURL, "sqlite://"); ok {
		driver, dsn = "sqlite", "file:"+p+"?_pragma=busy_timeout(10000)"
	}
	raw, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return raw
}

func rawConfig(t *testing.T, databaseURL string, id int64) string {
	t.Helper()
	var cfg string
	if err := rawDB(t, databaseURL).QueryRow(`SELECT config FROM channels WHERE id = $1`, id).Scan(&cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func setRawConfig(t *testing.T, databaseURL string, id int64, cfg string) {
	t.Helper()
	if _, err := rawDB(t, databaseURL).Exec(`UPDATE channels SET config = $1 WHERE id = $2`, cfg, id); err != nil {
		t.Fatal(err)
	}
}
