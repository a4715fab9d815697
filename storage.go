package litequeue

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed schema.sql
var schemaSQL string

const (
	// schemaVersion is the version of schema.sql, kept in litequeue_meta.
	schemaVersion = 3

	// applicationID marks a SQLite file as litequeue's ("LQUE"), set only
	// where the file's application_id is 0.
	applicationID = 0x4c515545

	// busyTimeoutMS bounds how long one connection waits for another's
	// write lock inside SQLite before SQLITE_BUSY.
	busyTimeoutMS = 10000

	// walSizeLimit is the size the -wal file is cut back to when it starts
	// again: just above what SQLite's automatic checkpoint (every 1000
	// pages of 4 KiB) lets it reach, so that in steady state it is never cut.
	walSizeLimit = 4 << 20

	// walWarnSize is the -wal size past which the janitor logs a warning:
	// checkpoints are not keeping up, most likely because a read
	// transaction (an open *sql.Rows, say) has been held for a long time.
	walWarnSize = 64 << 20
)

// sqliteHeader opens every SQLite 3 database file.
var sqliteHeader = []byte("SQLite format 3\x00")

// dsn turns a file path into the driver's connection string. The path is
// escaped into a file: URI so that nothing in it — a '?', a '#', a "file:"
// prefix — can add a parameter or change a pragma.
//
// The pragmas set on every connection, each with its reason:
//   - busy_timeout: wait for another connection's write lock instead of
//     failing at once with SQLITE_BUSY.
//   - synchronous: FULL makes an acknowledged commit survive power loss;
//     NORMAL (if asked for) only a crash of the process.
//   - _txlock=immediate: every transaction takes the write lock at BEGIN,
//     so a read-then-write transaction never fails with SQLITE_BUSY halfway.
//   - journal_size_limit: when a checkpoint has emptied the WAL and the next
//     writer starts it again, a WAL file larger than walSizeLimit is cut
//     back to it. Without it the -wal keeps the largest size it ever had:
//     hundreds of megabytes after a read transaction held open for a while
//     kept checkpoints from emptying it (see walGrowth).
//
// journal_mode=WAL is persistent in the file and set once by Open, after
// the file has been checked.
func dsn(path string, a access, synchronous string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive letter: file:///C:/…
	}
	u := url.URL{Scheme: "file", Path: p}
	v := url.Values{}
	v.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS))
	v.Add("_pragma", "synchronous("+synchronous+")")
	v.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", walSizeLimit))
	v.Add("_txlock", "immediate")
	switch a {
	case readAccess:
		// query_only rather than mode=ro: a read-only connection could not
		// create the -shm file a WAL database needs when no writer has it open.
		v.Add("_pragma", "query_only(1)")
	case frozenAccess:
		// SQLite's own URI parameters: read the file as it is, with no -shm
		// and no locks.
		v.Add("mode", "ro")
		v.Add("immutable", "1")
		v.Add("_pragma", "query_only(1)")
	}
	return u.String() + "?" + v.Encode(), nil
}

// access is how a connection pool uses the file.
type access int

const (
	writeAccess  access = iota // Open
	readAccess                 // OpenReadOnly
	frozenAccess               // OpenReadOnly where no -shm can be made: see openFrozen
)

// sqliteCantOpen is SQLite's primary result code SQLITE_CANTOPEN.
const sqliteCantOpen = 14

// openFrozen reports whether OpenReadOnly, having failed with err, may read
// the file as immutable instead. That is the case in a directory where
// SQLite cannot create the -shm file (read-only media, a read-only mount)
// and no -wal file exists: no writer can be at work there, since a writer
// of a WAL file needs both, and every committed transaction is in the file
// itself.
func openFrozen(path string, err error) bool {
	if !isCantOpen(err) {
		return false
	}
	_, statErr := os.Stat(path + "-wal")
	return errors.Is(statErr, os.ErrNotExist)
}

// isCantOpen reports whether err is SQLite's SQLITE_CANTOPEN.
func isCantOpen(err error) bool {
	var se interface{ Code() int }
	return errors.As(err, &se) && se.Code()&0xff == sqliteCantOpen
}

// prepareFile checks that path is either missing, empty, or a SQLite file
// that this process may write, and creates a missing file with mode 0600
// (SQLite gives its -wal and -shm files the mode of the database file).
// A file it may not write is refused here, with a clear error, rather than
// opened read-only by SQLite, where every write would fail later.
func prepareFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		return f.Close()
	}
	if !errors.Is(err, os.ErrExist) {
		return err
	}
	f, err = os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return fmt.Errorf("the file is not writable (OpenReadOnly can inspect it): %w", err)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	return checkHeader(f)
}

// checkReadable checks that path is a file this process may read, and
// either empty or a SQLite file, for OpenReadOnly: the same refusals, in
// the same words, as Open's.
func checkReadable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return checkHeader(f)
}

// checkHeader refuses a file that does not start as a SQLite file does,
// unless it is empty (an empty file is an empty database).
func checkHeader(f *os.File) error {
	if info, err := f.Stat(); err == nil && info.IsDir() {
		return errors.New("it is a directory, not a database file")
	}
	header := make([]byte, len(sqliteHeader))
	n, err := io.ReadFull(f, header)
	switch {
	case n == 0 && (err == io.EOF):
		return nil
	case err != nil && !errors.Is(err, io.ErrUnexpectedEOF):
		return err
	case !bytes.Equal(header[:n], sqliteHeader):
		return errors.New("the file is not a SQLite database")
	}
	return nil
}

// openDB opens a connection pool on the file with at most n connections.
func openDB(path string, a access, synchronous string, n int) (*sqlx.DB, error) {
	name, err := dsn(path, a, synchronous)
	if err != nil {
		return nil, err
	}
	db, err := sqlx.Open("sqlite", name)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	return db, nil
}

// checkFile refuses a file that litequeue must not change: another
// application's SQLite file, or a schema newer than this binary. It only
// reads, so a refused file is left as it was. It returns the file's schema
// version, 0 for a file without litequeue's tables.
func checkFile(ctx context.Context, db *sqlx.DB) (int, error) {
	var appID int64
	if err := db.GetContext(ctx, &appID, `PRAGMA application_id`); err != nil {
		return 0, fmt.Errorf("read application_id: %w", err)
	}
	if appID != 0 && appID != applicationID {
		return 0, fmt.Errorf("the file belongs to another application (application_id %#x)", appID)
	}
	version, err := readSchemaVersion(ctx, db)
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if version > schemaVersion {
		return 0, fmt.Errorf("the file has litequeue schema version %d, newer than this binary's %d: upgrade litequeue", version, schemaVersion)
	}
	return version, nil
}

// readSchemaVersion returns the version in litequeue_meta, 0 if the file
// has no litequeue tables yet.
func readSchemaVersion(ctx context.Context, db sqlx.QueryerContext) (int, error) {
	var n int
	err := sqlx.GetContext(ctx, db, &n,
		`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'litequeue_meta'`)
	if err != nil || n == 0 {
		return 0, err
	}
	var version int
	err = sqlx.GetContext(ctx, db, &version,
		`SELECT CAST(value AS INTEGER) FROM litequeue_meta WHERE name = 'schema_version'`)
	if errors.Is(err, errNoRows) {
		return 0, nil
	}
	return version, err
}
