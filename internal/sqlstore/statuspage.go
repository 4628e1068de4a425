package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/beethq/beet"
)

const statusPageColumns = `id, account_id, slug, title, description, tags, beet_ids, created_at, updated_at`

const statusNoticeColumns = `id, page_id, number, title, body, severity, resolved_at, created_at, updated_at`

func slugTaken(slug string) error {
	return &beet.Error{Code: beet.ECONFLICT, Field: "slug", Message: fmt.Sprintf("the slug %q is taken", slug)}
}

// CreateStatusPage inserts p and sets its ID.
func (db *DB) CreateStatusPage(ctx context.Context, p *beet.StatusPage) error {
	np := *p
	np.CreatedAt, np.UpdatedAt = stamp(np.CreatedAt), stamp(np.UpdatedAt)
	err := db.write.QueryRowContext(ctx, `INSERT INTO status_pages
		(account_id, slug, title, description, tags, beet_ids, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		np.AccountID, np.Slug, np.Title, np.Description, strings.Join(np.Tags, " "), joinIDs(np.BeetIDs),
		toMicros(np.CreatedAt), toMicros(np.UpdatedAt)).Scan(&np.ID)
	switch {
	case db.d.isUnique(err):
		return fmt.Errorf("create status page: %w", slugTaken(np.Slug))
	case db.d.isForeignKey(err):
		return fmt.Errorf("create status page: %w", beet.Errorf(beet.ENOTFOUND, "account %d not found", np.AccountID))
	case err != nil:
		return fmt.Errorf("create status page: %w", err)
	}
	*p = np
	return nil
}

// UpdateStatusPage stores p's fields but its account and creation time.
func (db *DB) UpdateStatusPage(ctx context.Context, p *beet.StatusPage) error {
	p.UpdatedAt = stamp(p.UpdatedAt)
	n, err := rowsAffected(db.write.ExecContext(ctx, `UPDATE status_pages SET slug = $2, title = $3, description = $4,
		tags = $5, beet_ids = $6, updated_at = $7 WHERE id = $1`,
		p.ID, p.Slug, p.Title, p.Description, strings.Join(p.Tags, " "), joinIDs(p.BeetIDs), toMicros(p.UpdatedAt)))
	switch {
	case db.d.isUnique(err):
		return fmt.Errorf("update status page: %w", slugTaken(p.Slug))
	case err != nil:
		return fmt.Errorf("update status page: %w", err)
	case n == 0:
		return fmt.Errorf("update status page: %w", beet.Errorf(beet.ENOTFOUND, "status page %d not found", p.ID))
	}
	return nil
}

// FindStatusPageByID returns the page or ENOTFOUND.
func (db *DB) FindStatusPageByID(ctx context.Context, id int64) (*beet.StatusPage, error) {
	p, err := scanStatusPage(db.read.QueryRowContext(ctx, `SELECT `+statusPageColumns+` FROM status_pages WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("find status page: %w", notFound(err, "status page %d not found", id))
	}
	return p, nil
}

// FindStatusPageBySlug returns the page or ENOTFOUND.
func (db *DB) FindStatusPageBySlug(ctx context.Context, slug string) (*beet.StatusPage, error) {
	p, err := scanStatusPage(db.read.QueryRowContext(ctx, `SELECT `+statusPageColumns+` FROM status_pages WHERE slug = $1`, slug))
	if err != nil {
		return nil, fmt.Errorf("find status page: %w", notFound(err, "no status page %q", slug))
	}
	return p, nil
}

// FindStatusPages returns the account's pages, oldest first.
func (db *DB) FindStatusPages(ctx context.Context, accountID int64) ([]*beet.StatusPage, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+statusPageColumns+` FROM status_pages WHERE account_id = $1
		ORDER BY id LIMIT $2`, accountID, beet.MaxPageLimit)
	if err != nil {
		return nil, fmt.Errorf("find status pages: %w", err)
	}
	defer rows.Close()
	out := []*beet.StatusPage{}
	for rows.Next() {
		p, err := scanStatusPage(rows)
		if err != nil {
			return nil, fmt.Errorf("find status pages: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// DeleteStatusPage removes the page; its notices go with it (ON DELETE
// CASCADE).
func (db *DB) DeleteStatusPage(ctx context.Context, id int64) error {
	n, err := rowsAffected(db.write.ExecContext(ctx, `DELETE FROM status_pages WHERE id = $1`, id))
	if err != nil {
		return fmt.Errorf("delete status page: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("delete status page: %w", beet.Errorf(beet.ENOTFOUND, "status page %d not found", id))
	}
	return nil
}

func scanStatusPage(s scanner) (*beet.StatusPage, error) {
	var (
		p                  beet.StatusPage
		tags, ids          string
		created, updatedAt int64
	)
	if err := s.Scan(&p.ID, &p.AccountID, &p.Slug, &p.Title, &p.Description, &tags, &ids, &created, &updatedAt); err != nil {
		return nil, err
	}
	p.Tags = strings.Fields(tags)
	if p.Tags == nil {
		p.Tags = []string{}
	}
	p.BeetIDs = []int64{}
	for _, f := range strings.Fields(ids) {
		if id, err := strconv.ParseInt(f, 10, 64); err == nil {
			p.BeetIDs = append(p.BeetIDs, id)
		}
	}
	p.CreatedAt, p.UpdatedAt = fromMicros(created), fromMicros(updatedAt)
	return &p, nil
}

func joinIDs(ids []int64) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	return b.String()
}

// CreateStatusNotice inserts n numbered after its page's last notice. Two
// notices created at once on one page may race for a number: the loser
// gets ECONFLICT from the unique (page_id, number) and can retry.
func (db *DB) CreateStatusNotice(ctx context.Context, n *beet.StatusNotice) error {
	nn := *n
	nn.CreatedAt, nn.UpdatedAt = stamp(nn.CreatedAt), stamp(nn.UpdatedAt)
	err := db.write.QueryRowContext(ctx, `INSERT INTO status_notices
		(page_id, number, title, body, severity, resolved_at, created_at, updated_at)
		VALUES ($1, (SELECT COALESCE(MAX(number), 0) + 1 FROM status_notices WHERE page_id = $1), $2, $3, $4, $5, $6, $7)
		RETURNING id, number`,
		nn.PageID, nn.Title, nn.Body, string(nn.Severity), nullMicros(nn.Resolved), toMicros(nn.CreatedAt), toMicros(nn.UpdatedAt)).
		Scan(&nn.ID, &nn.Number)
	switch {
	case db.d.isUnique(err):
		return fmt.Errorf("create status notice: %w", beet.Errorf(beet.ECONFLICT, "another notice was added at the same moment; try again"))
	case db.d.isForeignKey(err):
		return fmt.Errorf("create status notice: %w", beet.Errorf(beet.ENOTFOUND, "status page %d not found", nn.PageID))
	case err != nil:
		return fmt.Errorf("create status notice: %w", err)
	}
	*n = nn
	return nil
}

// UpdateStatusNotice stores n's changeable fields.
func (db *DB) UpdateStatusNotice(ctx context.Context, n *beet.StatusNotice) error {
	n.UpdatedAt = stamp(n.UpdatedAt)
	c, err := rowsAffected(db.write.ExecContext(ctx, `UPDATE status_notices SET title = $2, body = $3, severity = $4,
		resolved_at = $5, updated_at = $6 WHERE id = $1`,
		n.ID, n.Title, n.Body, string(n.Severity), nullMicros(n.Resolved), toMicros(n.UpdatedAt)))
	if err != nil {
		return fmt.Errorf("update status notice: %w", err)
	}
	if c == 0 {
		return fmt.Errorf("update status notice: %w", beet.Errorf(beet.ENOTFOUND, "notice %d not found", n.ID))
	}
	return nil
}

// FindStatusNoticeByID returns the notice or ENOTFOUND.
func (db *DB) FindStatusNoticeByID(ctx context.Context, id int64) (*beet.StatusNotice, error) {
	n, err := scanStatusNotice(db.read.QueryRowContext(ctx, `SELECT `+statusNoticeColumns+` FROM status_notices WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("find status notice: %w", notFound(err, "notice %d not found", id))
	}
	return n, nil
}

// FindStatusNotices returns the page's notices, newest first.
func (db *DB) FindStatusNotices(ctx context.Context, pageID int64, limit int) ([]*beet.StatusNotice, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+statusNoticeColumns+` FROM status_notices WHERE page_id = $1
		ORDER BY number DESC LIMIT $2`, pageID, pageLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("find status notices: %w", err)
	}
	defer rows.Close()
	out := []*beet.StatusNotice{}
	for rows.Next() {
		n, err := scanStatusNotice(rows)
		if err != nil {
			return nil, fmt.Errorf("find status notices: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// DeleteStatusNotice removes the notice.
func (db *DB) DeleteStatusNotice(ctx context.Context, id int64) error {
	n, err := rowsAffected(db.write.ExecContext(ctx, `DELETE FROM status_notices WHERE id = $1`, id))
	if err != nil {
		return fmt.Errorf("delete status notice: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("delete status notice: %w", beet.Errorf(beet.ENOTFOUND, "notice %d not found", id))
	}
	return nil
}

func scanStatusNotice(s scanner) (*beet.StatusNotice, error) {
	var (
		n                  beet.StatusNotice
		severity           string
		resolved           sql.NullInt64
		created, updatedAt int64
	)
	if err := s.Scan(&n.ID, &n.PageID, &n.Number, &n.Title, &n.Body, &severity, &resolved, &created, &updatedAt); err != nil {
		return nil, err
	}
	n.Severity = beet.NoticeSeverity(severity)
	n.Resolved = fromNullMicros(resolved)
	n.CreatedAt, n.UpdatedAt = fromMicros(created), fromMicros(updatedAt)
	return &n, nil
}

// FindStatusPageBeets returns the account's beets that carry one of tags
// or are in ids, by name, with their tags: one query for the beets (the
// beet_tags index serves the tag match) and one for their tags. Past the
// limit, the down and anomalous beets are kept before the rest, so a page
// cut at its limit still shows every beet in trouble.
func (db *DB) FindStatusPageBeets(ctx context.Context, accountID int64, tags []string, ids []int64, limit int) ([]*beet.StatusPageBeet, error) {
	out := []*beet.StatusPageBeet{}
	if len(tags) == 0 && len(ids) == 0 {
		return out, nil
	}
	if limit <= 0 || limit > beet.MaxStatusPageBeets+1 { // one more tells the page it was cut
		limit = beet.MaxStatusPageBeets + 1
	}
	args := []any{accountID}
	var match []string
	if len(ids) > 0 {
		match = append(match, "id IN ("+marks(&args, int64Args(ids))+")")
	}
	if len(tags) > 0 {
		ts := make([]any, len(tags))
		for i, t := range tags {
			ts[i] = t
		}
		match = append(match, "EXISTS (SELECT 1 FROM beet_tags t WHERE t.beet_id = beets.id AND t.tag IN ("+marks(&args, ts)+"))")
	}
	args = append(args, limit)
	byName := db.d.lowerName() + ", id"
	rows, err := db.read.QueryContext(ctx, `SELECT id, name, status, status_since, created_at FROM (
		SELECT id, name, status, status_since, created_at FROM beets
		WHERE account_id = $1 AND (`+strings.Join(match, " OR ")+`)
		ORDER BY CASE WHEN status IN `+troubleStatuses+` THEN 0 ELSE 1 END, `+byName+`
		LIMIT $`+strconv.Itoa(len(args))+`) AS shown ORDER BY `+byName, args...)
	if err != nil {
		return nil, fmt.Errorf("find status page beets: %w", err)
	}
	defer rows.Close()
	var found []int64
	for rows.Next() {
		var (
			b              beet.StatusPageBeet
			status         string
			since, created int64
		)
		if err := rows.Scan(&b.ID, &b.Name, &status, &since, &created); err != nil {
			return nil, fmt.Errorf("find status page beets: %w", err)
		}
		b.Status, b.StatusSince, b.CreatedAt = beet.Status(status), fromMicros(since), fromMicros(created)
		out = append(out, &b)
		found = append(found, b.ID)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find status page beets: %w", err)
	}
	bt, err := db.FindBeetTags(ctx, found)
	if err != nil {
		return nil, err
	}
	for _, b := range out {
		b.Tags = bt[b.ID]
	}
	return out, nil
}

// FindStatusFlips returns the beets' newest flips at or after since, newest
// first, so a limit cuts the oldest; the flips_beet_id_at index serves
// each beet's range.
func (db *DB) FindStatusFlips(ctx context.Context, beetIDs []int64, since time.Time, limit int) ([]*beet.StatusFlip, error) {
	out := []*beet.StatusFlip{}
	if len(beetIDs) == 0 {
		return out, nil
	}
	args := []any{toMicros(since)}
	in := marks(&args, int64Args(beetIDs))
	args = append(args, limit)
	rows, err := db.read.QueryContext(ctx, `SELECT beet_id, at, from_status, to_status FROM flips
		WHERE beet_id IN (`+in+`) AND at >= $1 ORDER BY at DESC, id DESC LIMIT $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("find status flips: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			f        beet.StatusFlip
			at       int64
			from, to string
		)
		if err := rows.Scan(&f.BeetID, &at, &from, &to); err != nil {
			return nil, fmt.Errorf("find status flips: %w", err)
		}
		f.At, f.From, f.To = fromMicros(at), beet.Status(from), beet.Status(to)
		out = append(out, &f)
	}
	return out, rows.Err()
}

// marks appends vals to args and returns their placeholders, "$3, $4, …".
func marks(args *[]any, vals []any) string {
	ms := make([]string, len(vals))
	for i, v := range vals {
		*args = append(*args, v)
		ms[i] = "$" + strconv.Itoa(len(*args))
	}
	return strings.Join(ms, ", ")
}

func int64Args(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}
