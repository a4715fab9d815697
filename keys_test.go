package litequeue_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/litequeue/litequeue"
)

// TestQueue_Mark checks a key's life on the injected clock: seen until the
// millisecond its TTL ends, and marked again for a new TTL.
func TestQueue_Mark(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	if seen(t, q, "order-1") {
		t.Fatalf("Seen before Mark = true")
	}
	mark(t, q, "order-1", time.Hour)
	at := func(d time.Duration, want bool) {
		t.Helper()
		clk.Set(epoch.Add(d))
		if got := seen(t, q, "order-1"); got != want {
			t.Fatalf("Seen at epoch+%v = %v, want %v", d, got, want)
		}
	}
	at(0, true)
	at(time.Hour-time.Millisecond, true)
	at(time.Hour, false)

	mark(t, q, "order-1", 2*time.Hour) // expired, marked again: until 3h
	at(2*time.Hour, true)
	mark(t, q, "order-1", 2*time.Hour) // marked again before expiry: until 4h
	at(3*time.Hour, true)
	at(4*time.Hour-time.Millisecond, true)
	at(4*time.Hour, false)
}

// TestQueue_MarkBetweenMilliseconds marks keys on a clock between two
// milliseconds, with ttls under one: each is seen for at least its ttl
// (expiry is kept in milliseconds, rounded up), and gone a millisecond
// later.
func TestQueue_MarkBetweenMilliseconds(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	start := epoch.Add(300 * time.Microsecond)
	for _, ttl := range []time.Duration{time.Nanosecond, 500 * time.Microsecond, 2 * time.Millisecond} {
		key := "k" + ttl.String()
		clk.Set(start)
		mark(t, q, key, ttl)
		for _, d := range []time.Duration{0, ttl - time.Nanosecond} {
			clk.Set(start.Add(d))
			if !seen(t, q, key) {
				t.Errorf("ttl %v: not seen at +%v", ttl, d)
			}
		}
		clk.Set(start.Add(ttl + time.Millisecond))
		if seen(t, q, key) {
			t.Errorf("ttl %v: still seen at +%v", ttl, ttl+time.Millisecond)
		}
	}
}

func TestQueue_MarkErrors(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	ctx := t.Context()
	for _, tc := range []struct {
		key  string
		ttl  time.Duration
		want string
	}{
		{"k", 0, `litequeue: mark "k": ttl 0s is not positive`},
		{"k", -time.Second, `litequeue: mark "k": ttl -1s is not positive`},
		{"", time.Second, `litequeue: mark: empty key`},
	} {
		if err := q.Mark(ctx, tc.key, tc.ttl); err == nil || err.Error() != tc.want {
			t.Errorf("Mark(%q, %v) = %v, want %q", tc.key, tc.ttl, err, tc.want)
		}
		tx, err := q.DB().BeginTxx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.MarkTx(ctx, tx, tc.key, tc.ttl); err == nil || err.Error() != tc.want {
			t.Errorf("MarkTx(%q, %v) = %v, want %q", tc.key, tc.ttl, err, tc.want)
		}
		tx.Rollback()
	}
	if _, err := q.Seen(ctx, ""); err == nil || !strings.Contains(err.Error(), "empty key") {
		t.Errorf(`Seen("") = %v, want an error`, err)
	}
}

// TestQueue_MarkTx checks that a key marked in the caller's transaction
// exists if and only if the caller commits.
func TestQueue_MarkTx(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	ctx := t.Context()
	for _, commit := range []bool{false, true} {
		tx, err := q.DB().BeginTxx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.MarkTx(ctx, tx, "k", time.Hour); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := seen(t, q, "k"); got != commit {
			t.Fatalf("Seen after MarkTx and commit=%v: %v", commit, got)
		}
	}
}

// TestQueue_SeenTx checks keys from inside a transaction: SeenTx sees the
// committed keys on the injected clock and what the transaction marked,
// which nothing outside it sees, and which a rollback undoes.
func TestQueue_SeenTx(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk})
	ctx := t.Context()
	mark(t, q, "old", time.Hour)
	seenTx := func(tx *sqlx.Tx, key string, want bool) {
		t.Helper()
		got, err := q.SeenTx(ctx, tx, key)
		if err != nil {
			t.Fatalf("SeenTx(%q): %v", key, err)
		}
		if got != want {
			t.Fatalf("SeenTx(%q) = %v, want %v", key, got, want)
		}
	}

	tx, err := q.DB().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	seenTx(tx, "old", true)
	seenTx(tx, "new", false)
	if err := q.MarkTx(ctx, tx, "new", time.Minute); err != nil {
		t.Fatal(err)
	}
	seenTx(tx, "new", true)
	if seen(t, q, "new") {
		t.Fatalf("Seen outside the transaction sees its uncommitted key")
	}
	if _, err := q.SeenTx(ctx, tx, ""); err == nil || err.Error() != "litequeue: seen: empty key" {
		t.Fatalf(`SeenTx("") = %v, want the empty-key error`, err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if seen(t, q, "new") {
		t.Fatalf("a key marked in a rolled-back transaction is seen")
	}

	clk.Add(time.Hour) // "old" expires
	tx, err = q.DB().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	seenTx(tx, "old", false)
}

// seen calls Seen and fails the test on error.
func seen(tb testing.TB, q *litequeue.Queue, key string) bool {
	tb.Helper()
	ok, err := q.Seen(tb.Context(), key)
	if err != nil {
		tb.Fatalf("Seen(%q): %v", key, err)
	}
	return ok
}

// mark calls Mark and fails the test on error.
func mark(tb testing.TB, q *litequeue.Queue, key string, ttl time.Duration) {
	tb.Helper()
	if err := q.Mark(tb.Context(), key, ttl); err != nil {
		tb.Fatalf("Mark(%q, %v): %v", key, ttl, err)
	}
}
