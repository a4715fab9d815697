package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/litequeue/litequeue/internal/store/postgres"
)

// TestEngine_XactStatus: the status of a transaction whose COMMIT was cut
// off, asked once the server is back. A durable batch's transaction,
// which writes a commit marker, committed if and only if its marker is
// there, whatever its ID says: after a crash of the server its ID may have
// been given again to a new transaction that committed. A light batch's,
// without a marker, is "aborted" or "in progress" as its ID says, and
// "unknown" where its ID says "committed"; an ID not given yet is
// "aborted".
func TestEngine_XactStatus(t *testing.T) {
	t.Parallel()
	db := openEngine(t).Info().Reads
	ctx := context.WithoutCancel(t.Context())
	token := int64(1000)
	begin := func(marked bool) (*sqlx.Tx, string) {
		t.Helper()
		tx := db.MustBeginTx(ctx, nil)
		tx.MustExec(`INSERT INTO litequeue_meta (name, value) VALUES ('xact-' || CAST(pg_current_xact_id() AS text), '1')`)
		var xact string
		if err := tx.Get(&xact, postgres.XactSQL); err != nil {
			t.Fatal(err)
		}
		if marked {
			token++
			tx.MustExec(`INSERT INTO litequeue_commits (token) VALUES ($1)`, token)
			xact = fmt.Sprint(xact, " ", token)
		}
		return tx, xact
	}
	status := func(tx *sqlx.Tx, commit bool, xact string) string {
		if commit {
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		} else if tx != nil {
			tx.Rollback()
		}
		return xact
	}
	var last int64
	if err := db.Get(&last, `SELECT CAST(CAST(pg_current_xact_id() AS text) AS bigint)`); err != nil {
		t.Fatal(err)
	}
	next := fmt.Sprint(last + 1000)
	dc, xdc := begin(true)
	status(dc, true, xdc)
	dr, xdr := begin(true)
	status(dr, false, xdr)
	lc, xlc := begin(false)
	status(lc, true, xlc)
	lr, xlr := begin(false)
	status(lr, false, xlr)
	dOpen, xdo := begin(true)
	defer dOpen.Rollback()
	lOpen, xlo := begin(false)
	defer lOpen.Rollback()
	committedID := xlc // an ID whose transaction committed, given again
	for _, tt := range []struct {
		what, xact, want string
	}{
		{"durable, committed", xdc, "committed"},
		{"durable, rolled back", xdr, "aborted"},
		{"durable, in progress", xdo, "in progress"},
		{"durable, its ID given again to a transaction that committed", committedID + " 999999", "aborted"},
		{"light, committed", xlc, "unknown"},
		{"light, rolled back", xlr, "aborted"},
		{"light, in progress", xlo, "in progress"},
		{"an ID not given yet", next, "aborted"},
	} {
		got, err := postgres.XactStatus(ctx, db, tt.xact)
		if err != nil || got != tt.want {
			t.Errorf("%s (%s): %q, %v; want %q", tt.what, tt.xact, got, err, tt.want)
		}
	}
}
