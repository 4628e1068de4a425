package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/beethq/beet"
)

// CreateAccount inserts a and its first user u in one transaction and sets
// their IDs. The email is stored lower-cased; a taken one is ECONFLICT.
func (db *DB) CreateAccount(ctx context.Context, a *beet.Account, u *beet.User) error {
	acc, usr := *a, *u
	acc.CreatedAt = stamp(acc.CreatedAt)
	usr.CreatedAt = stamp(usr.CreatedAt)
	usr.Email = strings.ToLower(usr.Email)
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if err := insertAccount(ctx, tx, &acc); err != nil {
			return err
		}
		usr.AccountID = acc.ID
		return db.insertUser(ctx, tx, &usr)
	})
	if err != nil {
		return fmt.Errorf("create account: %w", err)
	}
	// Only a committed insert hands out IDs.
	*a, *u = acc, usr
	return nil
}

func insertAccount(ctx context.Context, q querier, a *beet.Account) error {
	if a.Timezone == "" {
		a.Timezone = "UTC"
	}
	return q.QueryRowContext(ctx, `INSERT INTO accounts (plan, timezone, created_at) VALUES ($1, $2, $3) RETURNING id`,
		string(a.Plan), a.Timezone, toMicros(a.CreatedAt)).Scan(&a.ID)
}

func (db *DB) insertUser(ctx context.Context, q querier, u *beet.User) error {
	err := q.QueryRowContext(ctx, `INSERT INTO users (account_id, email, password_hash, created_at)
		VALUES ($1, $2, $3, $4) RETURNING id`,
		u.AccountID, u.Email, u.PasswordHash, toMicros(u.CreatedAt)).Scan(&u.ID)
	if db.d.isUnique(err) {
		return &beet.Error{Code: beet.ECONFLICT, Field: "email", Message: "this email address is already registered"}
	}
	return err
}

// FindAccountByID returns the account or an ENOTFOUND error.
func (db *DB) FindAccountByID(ctx context.Context, id int64) (*beet.Account, error) {
	a, err := scanAccount(db.read.QueryRowContext(ctx, `SELECT `+accountColumns+` FROM accounts WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("find account: %w", notFound(err, "account %d not found", id))
	}
	return a, nil
}

// FindAccounts returns every account in ID order.
func (db *DB) FindAccounts(ctx context.Context) ([]*beet.Account, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+accountColumns+` FROM accounts ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("find accounts: %w", err)
	}
	defer rows.Close()
	out := []*beet.Account{}
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, fmt.Errorf("find accounts: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find accounts: %w", err)
	}
	return out, nil
}

// SetAccountPlan changes the account's plan.
func (db *DB) SetAccountPlan(ctx context.Context, id int64, p beet.Plan) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var old string
		if err := tx.QueryRowContext(ctx, `SELECT plan FROM accounts WHERE id = $1`, id).Scan(&old); err != nil {
			return notFound(err, "account %d not found", id)
		}
		if old == string(p) {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET plan = $1 WHERE id = $2`, string(p), id); err != nil {
			return err
		}
		return db.lowerRetentionMark(ctx, tx, p, id)
	})
	if err != nil {
		return fmt.Errorf("set account plan: %w", err)
	}
	return nil
}

// FindUserByEmail matches the email case-insensitively.
func (db *DB) FindUserByEmail(ctx context.Context, email string) (*beet.User, error) {
	u, err := scanUser(db.read.QueryRowContext(ctx, `SELECT id, account_id, email, password_hash, created_at
		FROM users WHERE email = $1`, strings.ToLower(email)))
	if err != nil {
		return nil, fmt.Errorf("find user: %w", notFound(err, "no user with that email"))
	}
	return u, nil
}

// FindUsers returns the account's users in ID order.
func (db *DB) FindUsers(ctx context.Context, accountID int64) ([]*beet.User, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, account_id, email, password_hash, created_at
		FROM users WHERE account_id = $1 ORDER BY id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("find users: %w", err)
	}
	defer rows.Close()
	out := []*beet.User{}
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, fmt.Errorf("find users: %w", err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find users: %w", err)
	}
	return out, nil
}

const accountColumns = `id, plan, timezone, badge_key, created_at`

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

func scanAccount(s scanner) (*beet.Account, error) {
	var (
		a       beet.Account
		plan    string
		created int64
	)
	if err := s.Scan(&a.ID, &plan, &a.Timezone, &a.BadgeKey, &created); err != nil {
		return nil, err
	}
	a.Plan, a.CreatedAt = beet.Plan(plan), fromMicros(created)
	return &a, nil
}

func scanUser(s scanner) (*beet.User, error) {
	var (
		u       beet.User
		created int64
	)
	if err := s.Scan(&u.ID, &u.AccountID, &u.Email, &u.PasswordHash, &created); err != nil {
		return nil, err
	}
	u.CreatedAt = fromMicros(created)
	return &u, nil
}
