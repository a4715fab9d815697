package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/litequeue/litequeue/internal/store/postgres"
)

// TestEngine_XactStatus: the status of a transaction whose COMMIT was cut
// off, asked once the server is back. Without a restart since the
// transaction began, it is the server's (pg_xact_status). After one (told
// here by a start time of the server that differs), an ID that the server
// gave again to a new transaction, as it does when the log of the first
// never reached the disk, would say the new one's status: so "committed"
// is "unknown", and "in progress" or "aborted", and an ID not given yet,
// are "aborted" — never "committed" of a write that may be lost.
func TestEngine_XactStatus(t *testing.T) {
	t.Parallel()
	db := openEngine(t).Info().Reads
	ctx := t.Context()
	begin := func() (*sqlx.Tx, string) {
		t.Helper()
		tx := db.MustBeginTx(ctx, nil)
		tx.MustExec(`INSERT INTO litequeue_meta (name, value) VALUES ('xact-' || CAST(pg_current_xact_id() AS text), '1')`)
		var xact string
		if err := tx.Get(&xact, postgres.XactSQL); err != nil {
			t.Fatal(err)
		}
		return tx, xact
	}
	committed, xc := begin()
	if err := committed.Commit(); err != nil {
		t.Fatal(err)
	}
	rolledBack, xa := begin()
	rolledBack.Rollback()
	open, xo := begin()
	defer open.Rollback()
	xid, _, _ := strings.Cut(xo, " ")
	var next string
	if err := db.Get(&next, `SELECT CAST(pg_snapshot_xmax(pg_current_snapshot()) AS text)`); err != nil {
		t.Fatal(err)
	}
	restarted := func(xact string) string {
		id, _, _ := strings.Cut(xact, " ")
		return id + " 1" // a start time of the server before this one
	}
	for _, tt := range []struct {
		what, xact, want string
	}{
		{"committed", xc, "committed"},
		{"rolled back", xa, "aborted"},
		{"in progress", xo, "in progress"},
		{"committed, asked after a restart", restarted(xc), "unknown"},
		{"rolled back, asked after a restart", restarted(xa), "aborted"},
		{"in progress, asked after a restart", restarted(xo), "aborted"},
		{"an ID not given since a restart", restarted(next), "aborted"},
	} {
		got, err := postgres.XactStatus(context.WithoutCancel(ctx), db, tt.xact)
		if err != nil || got != tt.want {
			t.Errorf("%s (%s): %q, %v; want %q", tt.what, tt.xact, got, err, tt.want)
		}
	}
	if _, err := postgres.XactStatus(ctx, db, xid); err == nil {
		t.Errorf("a transaction named without the server's start time: no error")
	}
}
