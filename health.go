package litequeue

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/litequeue/litequeue/internal/store/sqlite"
)

// Health is what [Queue.Health] found in the queue's file: whether SQLite
// finds it sound, whose it is, its sizes and what it holds. A figure that
// could not be read keeps its zero value (-1 for a count), and why is one
// of the [Health.Problems].
//
// A file in journal mode delete, as [Queue.Backup] and SQLite's VACUUM INTO
// write it, is a [Health.Backup]: [Open] switches every file it opens to
// WAL, so a file in use by litequeue is never one. With [Health.OK], it is
// a sound backup.
type Health struct {
	Integrity     []string      // what SQLite's integrity check reports: ["ok"] for a sound file
	SchemaVersion int           // litequeue's schema version in the file
	ApplicationID int64         // the file's application_id: litequeue's, or 0
	JournalMode   string        // "wal"; "delete" for a copy, such as a VACUUM INTO backup
	Backup        bool          // a copy at rest, in journal mode delete (see above)
	FileBytes     int64         // the size of the database file
	WALBytes      int64         // the size of its -wal file; 0 when there is none
	Jobs          map[State]int // jobs by state, every state present; nil if they could not be counted
	HistoryRows   int           // rows of history, of every job
	Keys          int           // idempotency keys, the expired ones not yet purged included
	Problems      []string      // what is wrong with the file, never nil
	Warnings      []string      // what may need a look but is not wrong, never nil
}

// OK reports whether the check found no problem.
func (h *Health) OK() bool { return len(h.Problems) == 0 }

// The reads of Health; the pragmas are SQLite's own.
const (
	healthIntegritySQL = `PRAGMA integrity_check`
	healthAppIDSQL     = `PRAGMA application_id`
	healthJournalSQL   = `PRAGMA journal_mode`
	// healthFormatSQL reads the file format byte at offset 18 of the
	// file's header: "02" for a file in WAL mode. sqlite_dbpage is SQLite's.
	healthFormatSQL  = `SELECT hex(substr(data, 19, 1)) FROM sqlite_dbpage WHERE pgno = 1`
	healthJobsSQL    = `SELECT state, COUNT(*) AS n FROM litequeue_jobs GROUP BY state`
	healthHistorySQL = `SELECT COUNT(*) FROM litequeue_attempts`
	healthKeysSQL    = `SELECT COUNT(*) FROM litequeue_keys`
)

// jobStates are the job states, in the order of a job's life.
var jobStates = []State{Pending, Running, Completed, Dead, Discarded, Cancelled, Expired}

// Health checks the queue's file while others work on it, for an operator
// or a monitor: SQLite's integrity check, the schema version, the
// application_id and journal mode, the sizes of the file and its -wal
// (a warning past 64 MiB: checkpoints are not keeping up), their
// permissions (a warning if users other than the owner may read or write
// them; a problem if the file's owner may not write its -wal or -shm,
// which fails every write), and the rows of litequeue's tables. Each read runs on its own,
// so that one a damaged file fails is a problem in the report, not the
// end of it; an error is returned only when the report could not be made
// (the [Queue] is closed, the file cannot be stat'ed). It only reads, also
// on a Queue from [OpenReadOnly]. On a server (package postgres) it reads
// the schema version and the rows only: the rest is a file's (the server
// checks its own pages).
func (q *Queue) Health(ctx context.Context) (*Health, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	h := &Health{HistoryRows: -1, Keys: -1, Problems: []string{}, Warnings: []string{}}
	c := &healthCheck{ctx: ctx, db: q.st.reads.DB, h: h}
	server := q.st.info.Path == "" // what is a file's has no counterpart on a server
	if server {
		if err := c.db.GetContext(ctx, &h.SchemaVersion, schemaVersionSQL); err != nil {
			c.problem("no schema version: %v", err)
		}
	} else {
		c.integrity()
		c.schema()
		c.applicationID()
		c.journalMode()
	}
	c.jobs()
	h.HistoryRows = c.count(healthHistorySQL, "history rows")
	h.Keys = c.count(healthKeysSQL, "idempotency keys")
	if server {
		return h, nil
	}
	if err := h.sizes(q.st.info.Path); err != nil {
		return nil, fmt.Errorf("litequeue: health: %w", err)
	}
	h.permissions(q.st.info.Path)
	h.Problems = append(h.Problems, sqlite.UnwritableSides(q.st.info.Path, false)...)
	if c.shortRead {
		h.Problems = append([]string{walCutShort}, h.Problems...)
	}
	return h, nil
}

// schemaVersionSQL reads the version of litequeue's tables on a server.
const schemaVersionSQL = `SELECT CAST(value AS INTEGER) FROM litequeue_meta WHERE name = 'schema_version'`

// healthCheck is one run of Health.
type healthCheck struct {
	ctx       context.Context
	db        *sqlx.DB
	h         *Health
	shortRead bool // a read failed on a -wal cut short
}

// problem adds a problem to the report, noting an error among args that
// says the -wal was cut short.
func (c *healthCheck) problem(format string, args ...any) {
	for _, a := range args {
		if err, ok := a.(error); ok && isShortRead(err) {
			c.shortRead = true
		}
	}
	c.h.Problems = append(c.h.Problems, fmt.Sprintf(format, args...))
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
	v, err := sqlite.ReadSchemaVersion(c.ctx, c.db)
	switch {
	case err != nil:
		c.problem("no schema version: %v", err)
	case v == 0:
		c.problem("no schema version")
	}
	c.h.SchemaVersion = v
}

// applicationID reads the file's application_id, which must be 0 or
// litequeue's.
func (c *healthCheck) applicationID() {
	h := c.h
	if err := c.db.GetContext(c.ctx, &h.ApplicationID, healthAppIDSQL); err != nil {
		c.problem("read application_id: %v", err)
	} else if h.ApplicationID != 0 && h.ApplicationID != sqlite.ApplicationID {
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

// jobs counts the jobs by state; a state litequeue does not know is a
// problem.
func (c *healthCheck) jobs() {
	var counts []struct {
		State State `db:"state"`
		N     int   `db:"n"`
	}
	if err := c.db.SelectContext(c.ctx, &counts, healthJobsSQL); err != nil {
		c.problem("count jobs: %v", err)
		return
	}
	jobs := make(map[State]int, len(jobStates))
	for _, st := range jobStates {
		jobs[st] = 0
	}
	for _, n := range counts {
		if _, known := jobs[n.State]; !known {
			c.problem("%d jobs are in the unknown state %q", n.N, n.State)
		}
		jobs[n.State] = n.N
	}
	c.h.Jobs = jobs
}

// count runs query, a count of what, and returns its result; -1 if it
// failed.
func (c *healthCheck) count(query, what string) int {
	var n int
	if err := c.db.GetContext(c.ctx, &n, query); err != nil {
		c.problem("count %s: %v", what, err)
		return -1
	}
	return n
}

// sizes reads the sizes of the file at path and of its -wal, with a
// warning for a -wal past sqlite.WALWarnSize. It stats the files and never opens
// them (see Open).
func (h *Health) sizes(path string) error {
	var err error
	if h.FileBytes, err = fileSize(path); err != nil {
		return err
	}
	if h.WALBytes, err = fileSize(path + "-wal"); err != nil {
		return err
	}
	if h.WALBytes > sqlite.WALWarnSize {
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
// short while a process had it open; "" for any other error.
// [Queue.Health] puts the same explanation first in its [Health.Problems].
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

// permissions warns of the database file and its -wal when users other
// than their owner may read or write them: the payloads they hold may be
// personal data. Open creates files with mode 0600, and SQLite gives the
// -wal the mode of the database file; a file copied or restored by another
// tool may have 0644. Windows has no such modes.
func (h *Health) permissions(path string) {
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
		h.Warnings = append(h.Warnings, fmt.Sprintf(
			"%s has mode %04o: users other than its owner can %s it, and the payloads in it may be personal data: chmod 600 %s",
			p, perm, can, sqlite.ShellQuote(p)))
	}
}
