package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/beethq/beet"
)

const channelColumns = `id, account_id, kind, name, config, reminder_every, failing_since, failing_reason, created_at, updated_at`

// CreateChannel inserts c and attaches it to every beet of its account, in
// one transaction. A zero CreatedAt becomes now.
func (db *DB) CreateChannel(ctx context.Context, c *beet.Channel) error {
	nc := *c
	nc.CreatedAt = stamp(nc.CreatedAt)
	nc.UpdatedAt = nc.CreatedAt
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		// The sealed config is bound to the row's ID, which the insert
		// makes: the row starts with an empty config and gets its own in
		// the same transaction, so the secret is never written in clear.
		err := tx.QueryRowContext(ctx, `INSERT INTO channels (account_id, kind, name, config, reminder_every, created_at, updated_at)
			VALUES ($1, $2, $3, '{}', $4, $5, $6) RETURNING id`,
			nc.AccountID, string(nc.Kind), nc.Name, int64(nc.ReminderEvery/time.Second),
			toMicros(nc.CreatedAt), toMicros(nc.UpdatedAt)).Scan(&nc.ID)
		if db.d.isForeignKey(err) {
			return beet.Errorf(beet.ENOTFOUND, "account %d not found", nc.AccountID)
		} else if err != nil {
			return err
		}
		cfg, err := db.storedConfig(nc.ID, nc.Config)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE channels SET config = $1 WHERE id = $2`, cfg, nc.ID); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO beet_channels (beet_id, channel_id)
			SELECT id, $1 FROM beets WHERE account_id = $2`, nc.ID, nc.AccountID)
		return err
	})
	if err != nil {
		return fmt.Errorf("create channel: %w", err)
	}
	*c = nc
	return nil
}

// FindChannelByID returns the channel or ENOTFOUND.
func (db *DB) FindChannelByID(ctx context.Context, id int64) (*beet.Channel, error) {
	c, err := db.scanChannel(db.read.QueryRowContext(ctx, `SELECT `+channelColumns+` FROM channels WHERE id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("find channel: %w", notFound(err, "channel %d not found", id))
	}
	return c, nil
}

// FindChannels returns the account's channels, oldest first.
func (db *DB) FindChannels(ctx context.Context, accountID int64) ([]*beet.Channel, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT `+channelColumns+` FROM channels WHERE account_id = $1 ORDER BY id LIMIT $2`,
		accountID, beet.MaxChannelsPerAccount)
	if err != nil {
		return nil, fmt.Errorf("find channels: %w", err)
	}
	defer rows.Close()
	out := []*beet.Channel{}
	for rows.Next() {
		c, err := db.scanChannel(rows)
		if err != nil {
			return nil, fmt.Errorf("find channels: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// UpdateChannel applies upd (the caller has validated the result). A
// changed config clears the failing mark: the next delivery tells.
func (db *DB) UpdateChannel(ctx context.Context, id int64, upd beet.ChannelUpdate, at time.Time) (*beet.Channel, error) {
	var out *beet.Channel
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		cur, err := db.scanChannel(tx.QueryRowContext(ctx, `SELECT `+channelColumns+` FROM channels WHERE id = $1`, id))
		if err != nil {
			return notFound(err, "channel %d not found", id)
		}
		next := upd.Apply(*cur)
		cfg, err := db.storedConfig(id, next.Config)
		if err != nil {
			return err
		}
		failing, reason := nullMicros(next.FailingSince), next.FailingReason
		if next.Config != cur.Config {
			failing, reason = sql.NullInt64{}, ""
		}
		out, err = db.scanChannel(tx.QueryRowContext(ctx, `UPDATE channels SET name = $1, config = $2, reminder_every = $3,
			failing_since = $4, failing_reason = $5, updated_at = $6 WHERE id = $7 RETURNING `+channelColumns,
			next.Name, cfg, int64(next.ReminderEvery/time.Second), failing, reason, toMicros(stamp(at)), id))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("update channel: %w", err)
	}
	return out, nil
}

// DeleteChannel removes the channel, its attachments and its deliveries.
func (db *DB) DeleteChannel(ctx context.Context, id int64) error {
	n, err := rowsAffected(db.write.ExecContext(ctx, `DELETE FROM channels WHERE id = $1`, id))
	if err != nil {
		return fmt.Errorf("delete channel: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("delete channel: %w", beet.Errorf(beet.ENOTFOUND, "channel %d not found", id))
	}
	return nil
}

// BeetChannels returns the IDs of the channels the beet notifies, in order.
func (db *DB) BeetChannels(ctx context.Context, beetID int64) ([]int64, error) {
	ids, err := scanIDs(db.read.QueryContext(ctx, `SELECT channel_id FROM beet_channels WHERE beet_id = $1 ORDER BY channel_id`, beetID))
	if err != nil {
		return nil, fmt.Errorf("beet channels: %w", err)
	}
	return ids, nil
}

// SetBeetChannels replaces the beet's channels in one transaction. A
// channel of another account is ENOTFOUND, as if it did not exist.
func (db *DB) SetBeetChannels(ctx context.Context, beetID int64, channelIDs []int64) error {
	ids := slices.Clone(channelIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var account int64
		if err := tx.QueryRowContext(ctx, `SELECT account_id FROM beets WHERE id = $1`, beetID).Scan(&account); err != nil {
			return notFound(err, "beet %d not found", beetID)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM beet_channels WHERE beet_id = $1`, beetID); err != nil {
			return err
		}
		for _, id := range ids {
			n, err := rowsAffected(tx.ExecContext(ctx, `INSERT INTO beet_channels (beet_id, channel_id)
				SELECT $1, id FROM channels WHERE id = $2 AND account_id = $3`, beetID, id, account))
			if err != nil {
				return err
			}
			if n == 0 {
				return &beet.Error{Code: beet.ENOTFOUND, Field: "channels", Message: "channel " + strconv.FormatInt(id, 10) + " not found"}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("set beet channels: %w", err)
	}
	return nil
}

// attachAccountChannels gives a new beet every channel of its account.
func attachAccountChannels(ctx context.Context, q querier, beetID, accountID int64) error {
	_, err := q.ExecContext(ctx, `INSERT INTO beet_channels (beet_id, channel_id)
		SELECT $1, id FROM channels WHERE account_id = $2`, beetID, accountID)
	return err
}

func (db *DB) scanChannel(s scanner) (*beet.Channel, error) {
	var (
		c                beet.Channel
		kind, cfg        string
		every            int64
		failing          sql.NullInt64
		created, updated int64
	)
	if err := s.Scan(&c.ID, &c.AccountID, &kind, &c.Name, &cfg, &every, &failing, &c.FailingReason, &created, &updated); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(strings.NewReader(cfg))
	if err := dec.Decode(&c.Config); err != nil {
		return nil, fmt.Errorf("channel %d: config: %w", c.ID, err)
	}
	if err := db.openConfig(c.ID, &c.Config); err != nil {
		return nil, err
	}
	c.Kind = beet.ChannelKind(kind)
	c.ReminderEvery = time.Duration(every) * time.Second
	c.FailingSince = fromNullMicros(failing)
	c.CreatedAt, c.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &c, nil
}

// ChannelsOfBeets returns the channel IDs of many beets, a chunk of IDs
// per query.
func (db *DB) ChannelsOfBeets(ctx context.Context, beetIDs []int64) (map[int64][]int64, error) {
	out := map[int64][]int64{}
	for len(beetIDs) > 0 {
		n := min(len(beetIDs), 500)
		marks := make([]string, n)
		args := make([]any, n)
		for i := range n {
			marks[i] = "$" + strconv.Itoa(i+1)
			args[i] = beetIDs[i]
		}
		rows, err := db.read.QueryContext(ctx, `SELECT beet_id, channel_id FROM beet_channels WHERE beet_id IN (`+
			strings.Join(marks, ",")+`) ORDER BY beet_id, channel_id`, args...)
		if err != nil {
			return nil, fmt.Errorf("channels of beets: %w", err)
		}
		for rows.Next() {
			var b, c int64
			if err := rows.Scan(&b, &c); err != nil {
				rows.Close()
				return nil, fmt.Errorf("channels of beets: %w", err)
			}
			out[b] = append(out[b], c)
		}
		if err := rows.Close(); err != nil {
			return nil, fmt.Errorf("channels of beets: %w", err)
		}
		beetIDs = beetIDs[n:]
	}
	return out, nil
}
