package store

import (
	"context"
	"time"
)

// Idempotency keys: a key and the moment it expires.

const seenSQL = `SELECT COUNT(*) FROM litequeue_keys WHERE key = ? AND expires_at > ?`

const markSQL = `INSERT INTO litequeue_keys (key, expires_at) VALUES (?, ?)
	ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at`

// KeySeen reports whether db holds key unexpired at now: marked with an
// expiry after now.
func KeySeen(ctx context.Context, db Execer, key string, now time.Time) (bool, error) {
	var n int
	if err := db.GetContext(ctx, &n, seenSQL, key, MS(now)); err != nil {
		return false, err
	}
	return n > 0, nil
}

// MarkKey records key in tx until expires, rounded up to the next whole
// millisecond (a key is never seen for less than it was marked for),
// replacing the expiry of a key marked before, expired or not.
func MarkKey(ctx context.Context, tx Execer, key string, expires time.Time) error {
	_, err := tx.ExecContext(ctx, markSQL, key, MSUp(expires))
	return err
}
