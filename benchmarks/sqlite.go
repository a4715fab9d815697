package main

import (
	"context"
	"database/sql"
	"net/url"

	_ "modernc.org/sqlite" // the "sqlite" driver, the one litequeue uses
)

// openSQLite opens the SQLite peers' file with the settings every SQLite
// run shares: WAL, synchronous=FULL (a commit survives power loss, as
// litequeue's default), a busy timeout, and BEGIN IMMEDIATE. The pool has
// one connection, as goqite's and River's docs advise for SQLite.
func openSQLite(ctx context.Context, path string) (*sql.DB, error) {
	v := url.Values{}
	v.Add("_pragma", "busy_timeout(10000)")
	v.Add("_pragma", "journal_mode(WAL)")
	v.Add("_pragma", "synchronous(FULL)")
	v.Add("_txlock", "immediate")
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: path}).String()+"?"+v.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// queryBlobs returns the single column of every row of query.
func queryBlobs(ctx context.Context, db *sql.DB, query string) ([][]byte, error) {
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// inTx runs fn in one transaction and commits it.
func inTx(ctx context.Context, db *sql.DB, fn func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}
