// Package pgtest gives each test a PostgreSQL database of its own, on the
// server named by the environment variable LITEQUEUE_TEST_POSTGRES (a
// postgres:// URL or a keyword/value DSN whose user may create databases).
// It is imported by tests only, so no program links the PostgreSQL driver
// through it.
//
// .ci/run starts a throwaway server and sets the variable; locally:
//
//	eval "$(.ci/postgres start)"
//	go test ./...
//	.ci/postgres stop
//
// Without the variable the tests that need PostgreSQL skip, naming it; under
// CI (CI=true) they fail instead, so that CI never passes without them.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
)

// EnvVar names the environment variable that holds the server's DSN.
const EnvVar = "LITEQUEUE_TEST_POSTGRES"

// timeout bounds each statement DSN runs on the server, so that a server
// that stops answering fails the test instead of hanging it.
const timeout = 30 * time.Second

// DSN creates an empty database private to the calling test, with a random
// name (lq_ and 16 hex digits), and returns the server's DSN with that
// database in place of the one it named. The database is dropped when the
// test and its subtests finish (after the cleanups registered later, such as
// closing a pool), also if connections to it are still open. Tests that call
// DSN may run in parallel.
//
// Without LITEQUEUE_TEST_POSTGRES, DSN skips the test; with CI=true it fails
// it. A server that cannot be reached, or refuses CREATE DATABASE, fails the
// test.
func DSN(tb testing.TB) string {
	tb.Helper()
	server := os.Getenv(EnvVar)
	if server == "" {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s is not set: CI runs the PostgreSQL tests (.ci/run starts a server with .ci/postgres)", EnvVar)
		}
		tb.Skipf("%s is not set: the PostgreSQL tests need a server (eval \"$(.ci/postgres start)\" starts one)", EnvVar)
	}
	name, err := randomName()
	if err != nil {
		tb.Fatalf("pgtest: database name: %v", err)
	}
	dsn, err := withDatabase(server, name)
	if err != nil {
		tb.Fatalf("pgtest: %s: %v", EnvVar, err)
	}
	if err := exec(tb.Context(), server, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("pgtest: create database %s on the server of %s: %v", name, EnvVar, err)
	}
	tb.Cleanup(func() {
		// FORCE ends the sessions a test left open (PostgreSQL 13+).
		if err := exec(context.Background(), server, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return dsn
}

// withDatabase returns dsn, a postgres:// (or postgresql://) URL or a
// keyword/value DSN, with its database set to name.
func withDatabase(dsn, name string) (string, error) {
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		// In a keyword/value DSN the last setting of a key wins.
		return dsn + " dbname=" + name, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		// Not err itself: it quotes the DSN, password and all.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return "", fmt.Errorf("not a valid URL: %v", err)
	}
	u.Path = "/" + name
	u.RawPath = ""
	return u.String(), nil
}

// randomName returns a database name no other test can have picked.
func randomName() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "lq_" + hex.EncodeToString(b), nil
}

// exec runs one statement on a connection of its own to dsn, and closes it.
func exec(ctx context.Context, dsn, stmt string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, stmt)
	return err
}
