package litequeue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/litequeue/litequeue/internal/store"
)

// Idempotency keys: an app records that it has done something ("order 42
// charged") with Mark, and asks with Seen before doing it again. Keys live
// in the queue's file, expire on the injected clock, and are purged once
// expired. SeenTx and MarkTx join the caller's transaction, so that the
// check, the app's write, its key and (with CompleteTx) the job's
// completion commit together.

// Seen reports whether key was marked and has not expired: a key marked at
// T with ttl D is seen while the injected clock reads before T+D. Expiry is
// kept in whole milliseconds, rounded up: a key may be seen for up to a
// millisecond past T+D, never for less than D. Inside a transaction, use
// [Queue.SeenTx].
func (q *Queue) Seen(ctx context.Context, key string) (bool, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return false, err
	}
	defer leave()
	return seen(ctx, q.st.reads, key, q.now())
}

// SeenTx is [Queue.Seen] inside the caller's transaction, begun on
// [Queue.DB]() or given by [Queue.WriteTx]: it sees what the transaction
// wrote, keys marked by [Queue.MarkTx] included. In a transaction that
// holds the write lock (WriteTx, or DB() with default options) no other
// writer can mark key between SeenTx and the commit, so the check, the
// app's write and MarkTx are one step: the exactly-once pattern (see the
// package doc, Idempotency).
func (q *Queue) SeenTx(ctx context.Context, tx *sqlx.Tx, key string) (bool, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return false, err
	}
	defer leave()
	return seen(ctx, q.st.appTx(tx), key, q.now())
}

// seen is Seen's answer at now, read on db.
func seen(ctx context.Context, db store.Execer, key string, now time.Time) (bool, error) {
	if key == "" {
		return false, errors.New("litequeue: seen: empty key")
	}
	ok, err := store.KeySeen(ctx, db, key, now)
	if err != nil {
		return false, fmt.Errorf("litequeue: seen %q: %w", key, err)
	}
	return ok, nil
}

// Mark records key until ttl from now on the injected clock. Marking a key
// again, expired or not, sets its expiry to now+ttl. It refuses an empty
// key and a ttl that is not positive.
func (q *Queue) Mark(ctx context.Context, key string, ttl time.Duration) error {
	leave, err := q.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	if err := checkKey(key, ttl); err != nil {
		return err
	}
	err = q.st.write(ctx, func(tx store.Execer) error {
		return store.MarkKey(ctx, tx, key, q.now().Add(ttl))
	})
	if err != nil {
		return fmt.Errorf("litequeue: mark %q: %w", key, err)
	}
	return nil
}

// MarkTx is [Queue.Mark] inside the caller's transaction, begun on
// [Queue.DB]() or given by [Queue.WriteTx]: the key is recorded if and only
// if the transaction commits.
func (q *Queue) MarkTx(ctx context.Context, tx *sqlx.Tx, key string, ttl time.Duration) error {
	leave, err := q.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	if err := checkKey(key, ttl); err != nil {
		return err
	}
	if err := store.MarkKey(ctx, q.st.appTx(tx), key, q.now().Add(ttl)); err != nil {
		return fmt.Errorf("litequeue: mark %q: %w", key, err)
	}
	return nil
}

// checkKey refuses the arguments of a Mark that cannot be meant.
func checkKey(key string, ttl time.Duration) error {
	switch {
	case key == "":
		return errors.New("litequeue: mark: empty key")
	case ttl <= 0:
		return fmt.Errorf("litequeue: mark %q: ttl %v is not positive", key, ttl)
	}
	return nil
}
