package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"

	"github.com/beethq/beet"
)

// AddProblem stores p, sets its ID, and in the same transaction drops the
// beet's oldest problems beyond beet.MaxProblemsPerBeet. An unknown beet is
// ENOTFOUND. A zero p.At becomes now.
func (db *DB) AddProblem(ctx context.Context, p *beet.Problem) error {
	np := *p
	np.At = stamp(np.At)
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO problems (beet_id, at, kind, detail) VALUES ($1, $2, $3, $4) RETURNING id`,
			np.BeetID, toMicros(np.At), string(np.Kind), np.Detail).Scan(&np.ID)
		if db.d.isForeignKey(err) {
			return beet.Errorf(beet.ENOTFOUND, "beet %d not found", np.BeetID)
		}
		if err != nil {
			return err
		}
		return trimProblems(ctx, tx, np.BeetID)
	})
	if err != nil {
		return fmt.Errorf("add problem: %w", err)
	}
	*p = np
	return nil
}

// trimProblems keeps the beet's newest MaxProblemsPerBeet problems. The
// subquery finds the ID of the first one to drop on the (beet_id, id) index.
func trimProblems(ctx context.Context, q querier, beetID int64) error {
	_, err := q.ExecContext(ctx, `DELETE FROM problems WHERE beet_id = $1 AND id <= (
		SELECT id FROM problems WHERE beet_id = $1 ORDER BY id DESC LIMIT 1 OFFSET $2)`,
		beetID, beet.MaxProblemsPerBeet)
	return err
}

// FindProblems returns the beet's problems, newest first. Limit 0 means
// beet.DefaultPageLimit. An unknown beet has no problems.
func (db *DB) FindProblems(ctx context.Context, beetID int64, limit int) ([]*beet.Problem, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, beet_id, at, kind, detail FROM problems
		WHERE beet_id = $1 ORDER BY id DESC LIMIT $2`, beetID, pageLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("find problems: %w", err)
	}
	defer rows.Close()
	out := []*beet.Problem{}
	for rows.Next() {
		var (
			p    beet.Problem
			at   int64
			kind string
		)
		if err := rows.Scan(&p.ID, &p.BeetID, &at, &kind, &p.Detail); err != nil {
			return nil, fmt.Errorf("find problems: %w", err)
		}
		p.At, p.Kind = fromMicros(at), beet.ProblemKind(kind)
		out = append(out, &p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find problems: %w", err)
	}
	return out, nil
}

// FindFlips returns the beet's flips, newest first. Limit 0 means
// beet.DefaultPageLimit. An unknown beet has no flips.
func (db *DB) FindFlips(ctx context.Context, beetID int64, limit int) ([]*beet.Flip, error) {
	return db.FindFlipPage(ctx, beet.FlipFilter{BeetID: beetID, Limit: limit})
}

// FindFlipPage returns a page of the beet's flips, newest first (by time,
// then ID), before f.Until (and at it, below f.BeforeID). Limit 0 means
// beet.DefaultPageLimit.
func (db *DB) FindFlipPage(ctx context.Context, f beet.FlipFilter) ([]*beet.Flip, error) {
	query := `SELECT id, beet_id, at, from_status, to_status, kind, reason, observed, expected
		FROM flips WHERE beet_id = $1`
	args := []any{f.BeetID}
	switch {
	case f.Until != nil && f.BeforeID != nil:
		args = append(args, toMicros(*f.Until), *f.BeforeID)
		u, id := strconv.Itoa(len(args)-1), strconv.Itoa(len(args))
		query += ` AND (at < $` + u + ` OR at = $` + u + ` AND id < $` + id + `)`
	case f.Until != nil:
		args = append(args, toMicros(*f.Until))
		query += ` AND at < $` + strconv.Itoa(len(args))
	}
	args = append(args, pageLimit(f.Limit))
	query += ` ORDER BY at DESC, id DESC LIMIT $` + strconv.Itoa(len(args))
	rows, err := db.read.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("find flips: %w", err)
	}
	defer rows.Close()
	out := []*beet.Flip{}
	for rows.Next() {
		var (
			f                  beet.Flip
			at                 int64
			from, to, kind     string
			observed, expected sql.NullFloat64
		)
		if err := rows.Scan(&f.ID, &f.BeetID, &at, &from, &to, &kind, &f.Reason, &observed, &expected); err != nil {
			return nil, fmt.Errorf("find flips: %w", err)
		}
		f.At, f.From, f.To, f.Kind = fromMicros(at), beet.Status(from), beet.Status(to), beet.FlipKind(kind)
		f.Observed, f.Expected = fromNullFloat(observed), fromNullFloat(expected)
		out = append(out, &f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find flips: %w", err)
	}
	return out, nil
}
