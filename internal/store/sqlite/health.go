package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/litequeue/litequeue/internal/store"
)

// The reads of Health; the pragmas are SQLite's own.
const (
	healthIntegritySQL = `PRAGMA integrity_check`
	healthAppIDSQL     = `PRAGMA application_id`
	healthJournalSQL   = `PRAGMA journal_mode`
	// healthFormatSQL reads the file format byte at offset 18 of the
	// file's header: "02" for a file in WAL mode. sqlite_dbpage is SQLite's.
	healthFormatSQL = `SELECT hex(substr(data, 19, 1)) FROM sqlite_dbpage WHERE pgno = 1`
)

// Health checks the file on litequeue's reads while others work on it
// (see store.Engine.Health): SQLite's integrity check, the schema
// version, the application_id and journal mode, the sizes of the file and
// its -wal (a warning past walWarnSize: checkpoints are not keeping up),
// their modes (a warning if users other than the owner may read or write
// them), and, as FileProblems, a -wal or -shm that the file's owner may
// not write, which fails every write. Each read runs on its own, so that
// one a damaged file fails is a problem in the report, not the end of it;
// the error is for a file that cannot be stat'ed. It only reads, also on
// a read-only Engine, and stats the files without opening them (see
// openFile).
func (e *Engine) Health(ctx context.Context) (*store.Health, error) {
	c := &healthCheck{ctx: ctx, db: e.db, h: &store.Health{ReadProblems: []string{}, Warnings: []string{}}}
	c.integrity()
	c.schema()
	c.application()
	c.journalMode()
	if err := c.sizes(e.path); err != nil {
		return nil, err
	}
	c.permissions(e.path)
	c.h.FileProblems = unwritableSides(e.path, false)
	return c.h, nil
}

// healthCheck is one run of Health.
type healthCheck struct {
	ctx context.Context
	db  *sqlx.DB
	h   *store.Health
}

// problem adds a problem to the report, and the explanation of an error
// among args that says the -wal was cut short.
func (c *healthCheck) problem(format string, args ...any) {
	for _, a := range args {
		if err, ok := a.(error); ok && isShortRead(err) {
			c.h.Explain = walCutShort
		}
	}
	c.h.ReadProblems = append(c.h.ReadProblems, fmt.Sprintf(format, args...))
}

// integrity runs SQLite's integrity check; each line of what it finds is
// a problem.
func (c *healthCheck) integrity() {
	h := c.h
	if err := c.db.SelectContext(c.ctx, &h.Integrity, healthIntegritySQL); err != nil {
		c.problem("integrity_check failed: %v", err)
		return
	}
	if len(h.Integrity) == 1 && h.Integrity[0] == "ok" {
		return
	}
	for _, row := range h.Integrity {
		for line := range strings.Lines(row) {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "***") {
				c.problem("integrity_check: %s", line)
			}
		}
	}
}

// schema reads litequeue's schema version.
func (c *healthCheck) schema() {
	v, err := readSchemaVersion(c.ctx, c.db)
	switch {
	case err != nil:
		c.problem("no schema version: %v", err)
	case v == 0:
		c.problem("no schema version")
	}
	c.h.SchemaVersion = v
}

// application reads the file's application_id, which must be 0 or
// litequeue's.
func (c *healthCheck) application() {
	h := c.h
	if err := c.db.GetContext(c.ctx, &h.ApplicationID, healthAppIDSQL); err != nil {
		c.problem("read application_id: %v", err)
	} else if h.ApplicationID != 0 && h.ApplicationID != applicationID {
		c.problem("application_id %#x is not litequeue's", h.ApplicationID)
	}
}

// journalMode reads the file's journal mode: delete is a backup's, and
// anything but it and WAL is a warning.
func (c *healthCheck) journalMode() {
	h := c.h
	switch err := c.db.GetContext(c.ctx, &h.JournalMode, healthJournalSQL); {
	case err != nil:
		c.problem("read journal_mode: %v", err)
	case h.JournalMode == "delete" && c.walFormat():
		// Read as a snapshot (see readAccessOf), SQLite opens a file in
		// WAL mode in journal mode delete.
		h.JournalMode = "wal"
	case h.JournalMode == "delete":
		h.Backup = true
	case h.JournalMode != "wal":
		h.Warnings = append(h.Warnings, fmt.Sprintf("journal mode is %s, not wal: fine for a copy; opening it for work switches it to WAL", h.JournalMode))
	}
}

// walFormat reports whether the file's header says it is in WAL mode.
func (c *healthCheck) walFormat() bool {
	var format string
	err := c.db.GetContext(c.ctx, &format, healthFormatSQL)
	return err == nil && format == "02"
}

// sizes reads the sizes of the file at path and of its -wal, with a
// warning for a -wal past walWarnSize.
func (c *healthCheck) sizes(path string) error {
	h := c.h
	var err error
	if h.FileBytes, err = fileSize(path); err != nil {
		return err
	}
	if h.WALBytes, err = fileSize(path + "-wal"); err != nil {
		return err
	}
	if h.WALBytes > walWarnSize {
		h.Warnings = append(h.Warnings, fmt.Sprintf("the WAL is %.1f MiB: checkpoints are not keeping up, or a reader holds an old snapshot", float64(h.WALBytes)/(1<<20)))
	}
	return nil
}

// fileSize returns the size of the file at path, 0 if there is none.
func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// permissions warns of the database file and its -wal when users other
// than their owner may read or write them: the payloads they hold may be
// personal data. Open creates files with mode 0600, and SQLite gives the
// -wal the mode of the database file; a file copied or restored by another
// tool may have 0644. Windows has no such modes.
func (c *healthCheck) permissions(path string) {
	if runtime.GOOS == "windows" {
		return
	}
	for _, p := range []string{path, path + "-wal"} {
		fi, err := os.Stat(p)
		if err != nil {
			continue // a missing -wal; sizes reports any other error
		}
		perm := fi.Mode().Perm()
		var can string
		switch {
		case perm&0o044 != 0 && perm&0o022 != 0:
			can = "read and write"
		case perm&0o044 != 0:
			can = "read"
		case perm&0o022 != 0:
			can = "write"
		default:
			continue
		}
		c.h.Warnings = append(c.h.Warnings, fmt.Sprintf(
			"%s has mode %04o: users other than its owner can %s it, and the payloads in it may be personal data: chmod 600 %s",
			p, perm, can, shellQuote(p)))
	}
}

// walCutShort explains SQLite's "disk I/O error (522)" on a WAL file: what
// happened and what to do.
const walCutShort = "the -wal holds less than the -shm beside it says (disk I/O error 522): " +
	"the -wal was deleted or cut short while a process had the database open. " +
	"The commits since the last checkpoint now live only in the -wal that process still has open: " +
	"stop the app cleanly, while nothing else has the file open, and its Close writes them into the database " +
	"(an app that is killed loses them); then run check again"

// ExplainShortRead returns what happened, and what to do, when err, from
// opening or reading a file, is SQLite's SQLITE_IOERR_SHORT_READ ("disk
// I/O error (522)"), which a file gives whose -wal was deleted or cut
// short while a process had it open; "" for any other error. Health puts
// the same explanation in its Explain.
func ExplainShortRead(err error) string {
	if isShortRead(err) {
		return walCutShort
	}
	return ""
}

// sqliteShortRead is SQLite's extended result code SQLITE_IOERR_SHORT_READ.
const sqliteShortRead = 522

// isShortRead reports whether err is SQLite's SQLITE_IOERR_SHORT_READ.
func isShortRead(err error) bool {
	var se interface{ Code() int }
	return errors.As(err, &se) && se.Code() == sqliteShortRead
}
