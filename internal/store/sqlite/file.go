package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/litequeue/litequeue/internal/store"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

const (
	// schemaVersion is the version of schema.sql, kept in litequeue_meta.
	schemaVersion = 7

	// applicationID marks a SQLite file as litequeue's ("LQUE"), set only
	// where the file's application_id is 0.
	applicationID = 0x4c515545

	// busyTimeoutMS bounds how long one connection waits for another's
	// write lock inside SQLite before SQLITE_BUSY.
	busyTimeoutMS = int(store.TurnWait / time.Millisecond)

	// walSizeLimit is the size the -wal file is cut back to when it starts
	// again: just above what SQLite's automatic checkpoint (every 1000
	// pages of 4 KiB) lets it reach, so that in steady state it is never cut.
	walSizeLimit = 4 << 20

	// walWarnSize is the -wal size past which the janitor logs a warning,
	// and Health warns: checkpoints are not keeping up, most likely
	// because a read transaction (an open *sql.Rows, say) has been held
	// for a long time.
	walWarnSize = 64 << 20
)

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
//   - wal_autocheckpoint: 0 with Options.Checkpoint "off", where an
//     external replicator checkpoints; else SQLite's default of 1000 pages.
//
// journal_mode=WAL is persistent in the file and set once by Open, after
// the file has been checked.
func dsn(path string, a access, synchronous, checkpoint string) (string, error) {
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
	if checkpoint == "off" {
		v.Add("_pragma", "wal_autocheckpoint(0)")
	}
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

// SQLite's result codes for a -shm it cannot make: the primary code
// SQLITE_CANTOPEN (a read-only mount), and the extended code
// SQLITE_READONLY_DIRECTORY (a directory this user may not write).
const (
	sqliteCantOpen          = 14
	sqliteReadOnlyDirectory = 1544
)

// openFrozen reports whether OpenReadOnly, having failed with err, may read
// the file as immutable instead. That is the case in a directory where
// SQLite cannot create the -shm file (read-only media, a read-only mount,
// a directory this user may not write) and no -wal file exists: no writer
// can be at work there, since a writer of a WAL file needs both, and every
// committed transaction is in the file itself.
func openFrozen(path string, err error) bool {
	if !isNoSHM(err) {
		return false
	}
	_, statErr := os.Stat(path + "-wal")
	return errors.Is(statErr, os.ErrNotExist)
}

// readAccessOf is how OpenReadOnly reads the file at path. A -wal and
// -shm that SQLite made beside it would have the file's mode and this
// user as owner (the file's owner if this process runs as root); where the
// file's owner could not write them (a file of mode 0400, a reader who
// may not write the file), its writers would fail later with "attempt to
// write a readonly database". Such a reader makes none: where no -wal
// exists, no writer is at work and every committed transaction is in the
// file, so it reads the file as a snapshot, as openFrozen does; a -wal
// without its -shm is refused, as reading it needs a -shm made.
func readAccessOf(path string) (access, error) {
	fi, err := os.Stat(path)
	if err != nil || !makesUnwritableSides(fi) {
		return readAccess, err
	}
	_, walErr := os.Stat(path + "-wal")
	_, shmErr := os.Stat(path + "-shm")
	switch {
	case errors.Is(walErr, fs.ErrNotExist):
		return frozenAccess, nil
	case walErr == nil && errors.Is(shmErr, fs.ErrNotExist):
		return 0, fmt.Errorf("its -wal has no -shm beside it, and one made by this process (uid %d) could not be written by the file's writers: read it as the file's owner", os.Geteuid())
	}
	return readAccess, nil
}

// isNoSHM reports whether err is SQLite's failure to make a -shm file.
func isNoSHM(err error) bool {
	var se interface{ Code() int }
	return errors.As(err, &se) && (se.Code()&0xff == sqliteCantOpen || se.Code() == sqliteReadOnlyDirectory)
}

// file is what openFile has opened: the first connection pool, of one
// connection, and for writing the write lock.
type file struct {
	db      *sqlx.DB
	lock    *fileLock // nil in ReadOnly
	version int       // litequeue's schema version in the file, 0 for none
}

// close closes whatever openFile opened.
func (f *file) close() error {
	var errs []error
	if f.db != nil {
		errs = append(errs, f.db.Close())
	}
	if f.lock != nil {
		errs = append(errs, f.lock.close())
	}
	return errors.Join(errs...)
}

// openFile checks the file at path, creating a missing one in Create,
// and opens its first connection and, to write, its write lock. It writes
// nothing to an existing file: everything that can refuse or fail happens
// here, before migrate's first write, and a refused file is left as it
// was, with no -lock beside it.
//
// It never opens the database file with os (createFile excepted): on
// POSIX, closing any descriptor of a file drops every fcntl lock the
// process holds on it, the shared lock that SQLite keeps in WAL mode
// included, and another SQLite client would then take itself for the last
// connection and delete the -wal under the process. The checks use
// os.Stat, which opens no descriptor, and SQLite itself, whose connections
// share their locks within the process.
func openFile(path string, mode Mode, synchronous, checkpoint string) (_ *file, err error) {
	f := &file{}
	defer func() {
		if err != nil {
			f.close()
		}
	}()
	createMu.Lock()
	exists, err := statFile(path, mode)
	if err == nil && !exists {
		// Nothing to refuse in a missing file: take the lock first, so that
		// a -lock that cannot be opened leaves no new file behind.
		if f.lock, err = openFileLock(path); err == nil {
			if err = createFile(path); errors.Is(err, fs.ErrExist) {
				err = nil // another process created it meanwhile: left alone
			}
		}
	}
	createMu.Unlock()
	if err != nil {
		return nil, err
	}
	if f.db, f.version, err = openChecked(path, mode, synchronous, checkpoint); err != nil {
		return nil, err
	}
	if mode == Existing && f.version == 0 {
		return nil, fmt.Errorf("%w (only Open adopts a file)", store.ErrNoTables)
	}
	if mode != ReadOnly && f.lock == nil {
		f.lock, err = openFileLock(path)
	}
	return f, err
}

// createMu serialises statFile and createFile across every Open of the
// process, for createFile's sake. It is process-wide because POSIX locks
// are.
var createMu sync.Mutex

// statFile checks path before anything opens it: it must name a regular
// file, which this process may write unless mode is ReadOnly, or, in
// Create, nothing. It reports whether the file exists. (SQLite would
// open a file it may not write read-only, and every write would fail
// later.)
func statFile(path string, mode Mode) (exists bool, err error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) && mode == Create {
		if _, lerr := os.Lstat(path); lerr == nil {
			return false, errors.New("it is a symbolic link to a missing file")
		}
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !fi.Mode().IsRegular() {
		return false, fmt.Errorf("it is %s, not a database file", FileType(fi.Mode()))
	}
	// SQLite reads a file of one byte as an empty database, and would
	// write over it; no database SQLite writes has one byte (but for the
	// "S" it puts into a new file on an msdos volume under macOS).
	if fi.Size() == 1 {
		return false, errNotSQLite
	}
	if mode == ReadOnly {
		if err := accessible(path, false); errors.Is(err, fs.ErrPermission) {
			return false, fmt.Errorf("the file is not readable: %w", err)
		} else if err != nil {
			return false, err
		}
		return true, nil
	}
	if err := accessible(path, true); errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		return false, fmt.Errorf("%w (OpenReadOnly can inspect it): %w", store.ErrNotWritable, err)
	} else if err != nil {
		return false, err
	}
	if sides := unwritableSides(path, true); len(sides) > 0 {
		return false, errors.New(strings.Join(sides, "; "))
	}
	return true, nil
}

// errNotSQLite is the refusal of a file that is not a SQLite database.
var errNotSQLite = errors.New("the file is not a SQLite database")

// createFile creates the missing file at path, empty, with mode 0600, so
// that SQLite, which gives its -wal and -shm the mode of the database
// file, makes no file that other users may read; a file that exists is
// fs.ErrExist, and left alone. Open creates the database file with it, and
// Backup reserves the name of its copy.
//
// It is the one place where litequeue opens and closes the database file
// with os, and that drops no SQLite lock: POSIX locks belong to a file (an
// inode), and one that this call has just created has none. A file that
// was deleted and made again is another inode: the old one's locks stay.
// The only connection that could lock the new file before the descriptor
// is closed is another Open of this process that found the file meanwhile;
// createMu keeps it waiting until the descriptor is closed. (A SQLite
// connection that the app opens by itself, not through litequeue, on a
// path that litequeue creates at the same instant, is not covered.)
func createFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fs.ErrExist
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// openChecked opens the first connection pool, of one connection, on the
// file and checks it with checkFile, reading only. OpenReadOnly falls back
// to reading the file as a snapshot where no -shm can be made (see
// openFrozen). It returns the file's schema version.
func openChecked(path string, mode Mode, synchronous, checkpoint string) (*sqlx.DB, int, error) {
	a := writeAccess
	if mode == ReadOnly {
		var err error
		if a, err = readAccessOf(path); err != nil {
			return nil, 0, err
		}
	}
	db, version, err := openAndCheck(path, a, synchronous, checkpoint)
	if mode == ReadOnly && openFrozen(path, err) {
		db, version, err = openAndCheck(path, frozenAccess, synchronous, checkpoint)
	}
	switch {
	case mode == ReadOnly && isNoSHM(err):
		return nil, 0, fmt.Errorf("SQLite cannot open the file with its -wal and -shm beside it (a directory this process may not write?): %w", err)
	case isNotADB(err):
		return nil, 0, errNotSQLite
	case err != nil:
		return nil, 0, err
	case mode == ReadOnly && version == 0:
		db.Close()
		return nil, 0, store.ErrNoTables
	}
	return db, version, nil
}

// openAndCheck is openChecked for one kind of access.
func openAndCheck(path string, a access, synchronous, checkpoint string) (*sqlx.DB, int, error) {
	db, err := openDB(path, a, synchronous, checkpoint, 1)
	if err != nil {
		return nil, 0, err
	}
	version, err := checkFile(context.Background(), db)
	if err != nil {
		db.Close()
		return nil, 0, err
	}
	return db, version, nil
}

// sqliteNotADB is SQLite's primary result code SQLITE_NOTADB.
const sqliteNotADB = 26

// isNotADB reports whether err is SQLite's SQLITE_NOTADB: the file is not
// a database.
func isNotADB(err error) bool {
	var se interface{ Code() int }
	return errors.As(err, &se) && se.Code()&0xff == sqliteNotADB
}

// openDB opens a connection pool on the file with at most n connections.
func openDB(path string, a access, synchronous, checkpoint string, n int) (*sqlx.DB, error) {
	name, err := dsn(path, a, synchronous, checkpoint)
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
	if errors.Is(err, store.ErrNoRows) {
		return 0, nil
	}
	return version, err
}

// recordTables are the tables of store.Info.Recorded, which schema.sql
// gained in version 5 without a new version.
var recordTables = []string{"litequeue_policies", "litequeue_throughput", "litequeue_workers"}

// composeTables are the tables of store.Info.Composed, which schema.sql
// gained without a new version.
var composeTables = []string{"litequeue_outputs", "litequeue_checkpoints", "litequeue_progress"}

// hasTables reports whether the file has every table of names.
func hasTables(ctx context.Context, db sqlx.QueryerContext, names []string) (bool, error) {
	for _, name := range names {
		if ok, err := hasTable(ctx, db, name); !ok || err != nil {
			return false, err
		}
	}
	return true, nil
}

// hasTable reports whether the file has the table name: a table added to
// schema.sql without a new version (see migrate.go) is missing from a file
// that only older binaries opened for writing.
func hasTable(ctx context.Context, db sqlx.QueryerContext, name string) (bool, error) {
	var n int
	err := sqlx.GetContext(ctx, db, &n, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, name)
	return n > 0, err
}

// shellQuote quotes path for a POSIX shell where it needs quoting.
func shellQuote(path string) string {
	if path != "" && !strings.ContainsFunc(path, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+,:@%=", r))
	}) {
		return path
	}
	return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
}
