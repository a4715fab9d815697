package litequeue

import (
	"context"

	"github.com/jmoiron/sqlx"
)

// watch tells an idle Work loop, with one cheap read, whether the file may
// have changed since it last looked: PRAGMA data_version, asked on a
// connection of the watch's own, changes whenever another connection
// commits — this Queue's writer, another Queue, another process, or the
// app's EnqueueTx. Only then, or when a time it already knows of comes,
// does the loop run its indexed look for due jobs and expired leases.
type watch struct {
	db      *sqlx.DB   // one query_only connection
	stmt    *sqlx.Stmt // PRAGMA data_version, prepared once
	version int64
	started bool
}

// watch returns a new watch of the file.
func (e *sqliteEngine) watch() (changes, error) {
	db, err := openDB(e.path, readAccess, e.synchronous, 1)
	if err != nil {
		return nil, err
	}
	stmt, err := db.Preparex(`PRAGMA data_version`)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &watch{db: db, stmt: stmt}, nil
}

// changed reports whether anyone committed to the file since the last call;
// true on the first.
func (w *watch) changed(ctx context.Context) (bool, error) {
	var v int64
	if err := w.stmt.GetContext(ctx, &v); err != nil {
		return true, err
	}
	changed := !w.started || v != w.version
	w.version, w.started = v, true
	return changed, nil
}

func (w *watch) close() error {
	w.stmt.Close()
	return w.db.Close()
}
