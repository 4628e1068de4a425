package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/secretbox"
)

// Channel secrets at rest (docs/SECURITY.md, "Secrets at rest"): with a
// keyring, the config fields that let someone post as Beet (url, secret,
// routing_key) are stored sealed, each bound to its channel and field;
// the email address (to) is not a secret and stays readable. Reads open
// them, so every caller above the store sees plain values.

// SetSecretKeys makes the store seal channel secrets with r's current key
// and open them with any of its keys; nil stores them as given. Call it
// before the store is used, then SealChannelSecrets.
func (db *DB) SetSecretKeys(r *secretbox.Keyring) { db.secrets = r }

// sealedFields are the config fields kept sealed, by JSON name.
func sealedFields(c *beet.ChannelConfig) map[string]*string {
	return map[string]*string{"url": &c.URL, "secret": &c.Secret, "routing_key": &c.RoutingKey}
}

// fieldAD binds a sealed value to its channel and field.
func fieldAD(channelID int64, field string) []byte {
	return []byte("beet channel " + strconv.FormatInt(channelID, 10) + " config." + field)
}

// storedConfig is the config column's text for channel id: sealed when
// the store has keys.
func (db *DB) storedConfig(id int64, c beet.ChannelConfig) (string, error) {
	if db.secrets != nil {
		for field, v := range sealedFields(&c) {
			sealed, err := db.secrets.Seal(*v, fieldAD(id, field))
			if err != nil {
				return "", fmt.Errorf("channel %d: seal config.%s: %w", id, field, err)
			}
			*v = sealed
		}
	}
	b, err := json.Marshal(c)
	return string(b), err
}

// openConfig opens the sealed fields of a config read from channel id's
// row. A sealed value the keys cannot open is an error that says what to
// set; plain values (rows from before a key was set) pass through.
func (db *DB) openConfig(id int64, c *beet.ChannelConfig) error {
	for field, v := range sealedFields(c) {
		if !secretbox.IsSealed(*v) {
			continue
		}
		if db.secrets == nil {
			return fmt.Errorf("channel %d: config.%s is encrypted (key %s) and BEET_SECRET_KEY is not set", id, field, secretbox.KeyID(*v))
		}
		plain, err := db.secrets.Open(*v, fieldAD(id, field))
		if err != nil {
			return fmt.Errorf("channel %d: config.%s: %w", id, field, err)
		}
		*v = plain
	}
	return nil
}

// SecretsReport is what SealChannelSecrets found and did.
type SecretsReport struct {
	Channels int `json:"channels"` // rows read
	Sealed   int `json:"sealed"`   // rows whose plain secrets were sealed now
	Resealed int `json:"resealed"` // rows moved from an old key to the current one (rotate)
	Plain    int `json:"plain"`    // rows left holding plain secrets (no key)
}

// SecretKeyError is a sealed value the store's keys cannot open (a wrong,
// missing or unlisted key, or a changed value), as opposed to a database
// failure.
type SecretKeyError struct{ Err error }

func (e *SecretKeyError) Error() string { return e.Err.Error() }
func (e *SecretKeyError) Unwrap() error { return e.Err }

// SealChannelSecrets runs at start-up and in `beet secrets rotate`. It reads
// every channel row and:
//   - without keys: fails if any value is sealed (the store could not
//     send those channels' alerts), else counts the plain rows;
//   - with keys: checks that every sealed value opens (a wrong key fails
//     here, clearly, not at the first alert), and seals plain values;
//   - with rotate: also reseals values of old keys under the current one.
//
// Each row is rewritten only if it still holds what was read, so a
// concurrent change wins and is sealed by its own write. On SQLite the
// rewrite runs with secure_delete and checkpoints the WAL, so the plain
// text does not stay behind in free pages; on PostgreSQL it runs VACUUM
// FULL on the table, so old row versions do not keep it either.
func (db *DB) SealChannelSecrets(ctx context.Context, rotate bool) (SecretsReport, error) {
	var rep SecretsReport
	type row struct {
		id  int64
		cfg string
	}
	rows, err := db.write.QueryContext(ctx, `SELECT id, config FROM channels ORDER BY id`)
	if err != nil {
		return rep, fmt.Errorf("seal channel secrets: %w", err)
	}
	var all []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.cfg); err != nil {
			rows.Close()
			return rep, fmt.Errorf("seal channel secrets: %w", err)
		}
		all = append(all, r)
	}
	if err := rows.Close(); err != nil {
		return rep, fmt.Errorf("seal channel secrets: %w", err)
	}

	type change struct {
		id       int64
		old, cfg string
	}
	var changes []change
	for _, r := range all {
		rep.Channels++
		var c beet.ChannelConfig
		if err := json.Unmarshal([]byte(r.cfg), &c); err != nil {
			return rep, fmt.Errorf("seal channel secrets: channel %d: config: %w", r.id, err)
		}
		plain, stale := false, false
		for _, v := range sealedFields(&c) {
			switch {
			case *v == "":
			case !secretbox.IsSealed(*v):
				plain = true
			case db.secrets == nil || secretbox.KeyID(*v) != db.secrets.Current().ID():
				stale = true
			}
		}
		// Opening proves the key: a wrong or missing one fails here.
		if err := db.openConfig(r.id, &c); err != nil {
			return rep, &SecretKeyError{err}
		}
		if db.secrets == nil {
			if plain {
				rep.Plain++
			}
			continue
		}
		if !plain && !(stale && rotate) {
			continue
		}
		cfg, err := db.storedConfig(r.id, c)
		if err != nil {
			return rep, err
		}
		changes = append(changes, change{r.id, r.cfg, cfg})
		if plain {
			rep.Sealed++
		} else {
			rep.Resealed++
		}
	}
	if len(changes) == 0 {
		return rep, nil
	}

	conn, err := db.write.Conn(ctx)
	if err != nil {
		return rep, fmt.Errorf("seal channel secrets: %w", err)
	}
	defer conn.Close()
	err = db.d.sealSecrets(ctx, conn, db.log, func() error {
		for _, ch := range changes {
			if _, err := conn.ExecContext(ctx, `UPDATE channels SET config = $1 WHERE id = $2 AND config = $3`, ch.cfg, ch.id, ch.old); err != nil {
				return fmt.Errorf("channel %d: %w", ch.id, err)
			}
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("seal channel secrets: %w", err)
	}
	db.log.Info("channel secrets sealed", "sealed", rep.Sealed, "resealed", rep.Resealed, "key", db.secrets.Current().ID())
	return rep, nil
}
