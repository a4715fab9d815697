package litequeue

import (
	"context"
	"errors"
	"sync"

	"github.com/jmoiron/sqlx"
)

// stmtCache holds prepared statements by their query, for the life of the
// Queue, so that a statement run again and again is parsed and planned
// once. The writer keeps one for its connection (stmtConn), and the Queue
// one for the reads a worker makes on every look for work on the read pool
// (see nextDue), where database/sql prepares a statement on each connection
// the first time it runs there, and keeps it. The zero value is empty and
// ready to use.
type stmtCache struct {
	mu    sync.Mutex
	stmts map[string]*sqlx.Stmt
}

// preparer is what a stmtCache prepares on: a connection or a pool.
type preparer interface {
	PreparexContext(ctx context.Context, query string) (*sqlx.Stmt, error)
}

// maxStmts bounds a statement cache: queries with (?) lists of varying
// length (bulk replay, retention) each prepare a statement of their own.
const maxStmts = 128

// get returns the statement for query, preparing it on p on first use.
func (c *stmtCache) get(ctx context.Context, p preparer, query string) (*sqlx.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.stmts[query]; ok {
		return st, nil
	}
	st, err := p.PreparexContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if c.stmts == nil || len(c.stmts) >= maxStmts {
		c.closeLocked()
		c.stmts = make(map[string]*sqlx.Stmt)
	}
	c.stmts[query] = st
	return st, nil
}

// close releases the statements.
func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeLocked()
}

func (c *stmtCache) closeLocked() error {
	var errs []error
	for q, st := range c.stmts {
		errs = append(errs, st.Close())
		delete(c.stmts, q)
	}
	return errors.Join(errs...)
}
