package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The PostgreSQL peers run on the server of -postgres, or else of
// LITEQUEUE_BENCH_POSTGRES or LITEQUEUE_TEST_POSTGRES (a postgres:// URL or a
// keyword/value DSN whose user may create databases). Each run gets a
// database of its own, created empty and dropped when the peer closes.
var postgresEnv = []string{"LITEQUEUE_BENCH_POSTGRES", "LITEQUEUE_TEST_POSTGRES"}

// errNoPostgres is why a PostgreSQL peer does not run without a server.
var errNoPostgres = fmt.Errorf("%w: no PostgreSQL server (give -postgres, or set %s)", errUnsupported, strings.Join(postgresEnv, " or "))

// freshDatabase creates an empty database on server and returns its DSN and
// a func that drops it, also with sessions still open.
func freshDatabase(ctx context.Context, server string) (dsn string, drop func() error, err error) {
	if server == "" {
		return "", nil, errNoPostgres
	}
	b := make([]byte, 8)
	rand.Read(b)
	name := "lqbench_" + hex.EncodeToString(b)
	if dsn, err = withDatabase(server, name); err != nil {
		return "", nil, err
	}
	if err := execPostgres(ctx, server, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("create database %s: %w", name, err)
	}
	drop = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := execPostgres(ctx, server, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop database %s: %w", name, err)
		}
		return nil
	}
	return dsn, drop, nil
}

// execPostgres runs one statement on a connection of its own.
func execPostgres(ctx context.Context, dsn, stmt string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, stmt)
	return err
}

// withDatabase returns dsn with its database set to name.
func withDatabase(dsn, name string) (string, error) {
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return dsn + " dbname=" + name, nil // the last setting of a key wins
	}
	u, err := url.Parse(dsn)
	if err != nil {
		var uerr *url.Error // its message quotes the DSN, password and all
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return "", fmt.Errorf("PostgreSQL DSN: not a valid URL: %v", err)
	}
	u.Path = "/" + name
	u.RawPath = ""
	return u.String(), nil
}
