package litequeue

import "github.com/jmoiron/sqlx"

// The app's own work in the queue's file: the pool DB() returns.

// appIdleConns is how many of the app's connections stay open between
// uses.
const appIdleConns = 4

// openAppDB opens the pool that DB() returns, apart from the pool of
// litequeue's own reads, so that those never wait for a connection the app
// holds: a transaction waiting for SQLite's write lock holds its
// connection all the while. Like a pool of database/sql by default, it
// opens as many connections as the app uses at once, so that a goroutine
// holding a transaction never waits for another connection that
// transactions waiting behind it hold; the app may bound it with
// DB().SetMaxOpenConns.
func openAppDB(path, synchronous string) (*sqlx.DB, error) {
	db, err := openDB(path, writeAccess, synchronous, 0)
	if err != nil {
		return nil, err
	}
	db.SetMaxIdleConns(appIdleConns)
	return db, nil
}
