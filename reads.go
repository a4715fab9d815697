package litequeue

import (
	"context"
	"errors"
	"sync"

	"github.com/jmoiron/sqlx"
)

// readStmts are the prepared statements of the reads a worker makes on
// every look for work (see nextDue). Unprepared, each would be parsed and
// planned anew on every look: most of an idle worker's CPU, and much of
// a busy one's. database/sql prepares a statement on each connection of
// the read pool the first time it runs there, and keeps it.
type readStmts struct {
	mu    sync.Mutex
	stmts map[string]*sqlx.Stmt
}

// get returns the statement for query on db, preparing it on first use.
func (r *readStmts) get(ctx context.Context, db *sqlx.DB, query string) (*sqlx.Stmt, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st, ok := r.stmts[query]; ok {
		return st, nil
	}
	st, err := db.PreparexContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if r.stmts == nil || len(r.stmts) >= maxStmts {
		r.closeLocked()
		r.stmts = make(map[string]*sqlx.Stmt)
	}
	r.stmts[query] = st
	return st, nil
}

// close releases the statements.
func (r *readStmts) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closeLocked()
}

func (r *readStmts) closeLocked() error {
	var errs []error
	for q, st := range r.stmts {
		errs = append(errs, st.Close())
		delete(r.stmts, q)
	}
	return errors.Join(errs...)
}
