package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/litequeue/litequeue"
)

// litequeueAppID is the application_id litequeue sets on its files ("LQUE").
const litequeueAppID = 0x4c515545

// largeWAL is the WAL size over which check warns: checkpoints are not
// keeping up, or a reader holds an old snapshot open.
const largeWAL = 64 << 20

// The fixed statements check runs; none is built from user input.
const (
	integritySQL  = `PRAGMA integrity_check`
	appIDSQL      = `PRAGMA application_id`
	journalSQL    = `PRAGMA journal_mode`
	schemaSQL     = `SELECT value FROM litequeue_meta WHERE name = 'schema_version'`
	stateCountSQL = `SELECT state, count(*) AS n FROM litequeue_jobs GROUP BY state`
	historySQL    = `SELECT count(*) FROM litequeue_attempts`
	keysSQL       = `SELECT count(*) FROM litequeue_keys`
)

// checkJSON is the output of "check --json".
type checkJSON struct {
	Path          string   `json:"path"`
	OK            bool     `json:"ok"`
	Problems      []string `json:"problems"`
	Warnings      []string `json:"warnings"`
	Integrity     []string `json:"integrity"` // ["ok"] when sound
	SchemaVersion string   `json:"schema_version"`
	ApplicationID int64    `json:"application_id"`
	JournalMode   string   `json:"journal_mode"`
	FileBytes     int64    `json:"file_bytes"`
	WALBytes      int64    `json:"wal_bytes"`
	// The counts are null when the file could not be counted.
	Jobs        map[string]int `json:"jobs"` // by state, every state present
	HistoryRows *int           `json:"history_rows"`
	Keys        *int           `json:"keys"`
}

// check runs "check".
func (c *cli) check(ctx context.Context, args []string) error {
	const use = "check [--json]"
	fs := c.flagSet("check", use)
	asJSON := fs.Bool("json", false, "write JSON")
	_, err := fs.parse(args, 0, 0)
	if err != nil {
		return err
	}
	q, err := c.openRead()
	if isShortRead(err) {
		return fmt.Errorf("%w\n%s", err, walCutShort)
	}
	if err != nil {
		return err
	}
	defer q.Close()
	r, err := inspectFile(ctx, q, c.dbPath())
	if err != nil {
		return err
	}
	if *asJSON {
		err = writeJSON(c.stdout, r)
	} else {
		c.writeCheck(r)
	}
	if err == nil && !r.OK {
		return &exitError{code: exitFailure} // the report says what is wrong
	}
	return err
}

// inspectFile gathers check's report on the file at path, open in q. A
// statement that fails on a damaged file is a problem in the report, not
// the end of it.
func inspectFile(ctx context.Context, q *litequeue.Queue, path string) (*checkJSON, error) {
	db := q.DB()
	r := &checkJSON{Path: path, Problems: []string{}, Warnings: []string{}}
	walShort := false // a read failed for a -wal cut short
	problem := func(format string, args ...any) {
		for _, a := range args {
			if err, ok := a.(error); ok && isShortRead(err) {
				walShort = true
			}
		}
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
	if err := db.SelectContext(ctx, &r.Integrity, integritySQL); err != nil {
		problem("integrity_check failed: %v", err)
	} else if len(r.Integrity) != 1 || r.Integrity[0] != "ok" {
		for _, row := range r.Integrity {
			for line := range strings.Lines(row) {
				if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "***") {
					problem("integrity_check: %s", line)
				}
			}
		}
	}
	if err := db.GetContext(ctx, &r.SchemaVersion, schemaSQL); err != nil {
		problem("no schema version: %v", err)
	}
	if err := db.GetContext(ctx, &r.ApplicationID, appIDSQL); err != nil {
		problem("read application_id: %v", err)
	} else if r.ApplicationID != 0 && r.ApplicationID != litequeueAppID {
		problem("application_id %#x is not litequeue's", r.ApplicationID)
	}
	if err := db.GetContext(ctx, &r.JournalMode, journalSQL); err != nil {
		problem("read journal_mode: %v", err)
	} else if r.JournalMode != "wal" {
		r.Warnings = append(r.Warnings, fmt.Sprintf("journal mode is %s, not wal: fine for a copy (a VACUUM INTO backup, say); Open switches the file to WAL", r.JournalMode))
	}
	var counts []struct {
		State string `db:"state"`
		N     int    `db:"n"`
	}
	if err := db.SelectContext(ctx, &counts, stateCountSQL); err != nil {
		problem("count jobs: %v", err)
	} else {
		r.Jobs = make(map[string]int)
		for _, st := range states {
			r.Jobs[string(st)] = 0
		}
		for _, n := range counts {
			if _, known := r.Jobs[n.State]; !known {
				problem("%d jobs are in the unknown state %q", n.N, n.State)
			}
			r.Jobs[n.State] = n.N
		}
	}
	count := func(query, what string) *int {
		var n int
		if err := db.GetContext(ctx, &n, query); err != nil {
			problem("count %s: %v", what, err)
			return nil
		}
		return &n
	}
	r.HistoryRows = count(historySQL, "history rows")
	r.Keys = count(keysSQL, "idempotency keys")
	var err error
	if r.FileBytes, err = fileSize(path); err != nil {
		return nil, err
	}
	if r.WALBytes, err = fileSize(path + "-wal"); err != nil {
		return nil, err
	}
	if r.WALBytes > largeWAL {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the WAL is %s: checkpoints are not keeping up, or a reader holds an old snapshot", fmtBytes(r.WALBytes)))
	}
	if walShort {
		r.Problems = append([]string{walCutShort}, r.Problems...)
	}
	r.OK = len(r.Problems) == 0
	return r, nil
}

// walCutShort explains SQLite's "disk I/O error (522)" on a WAL file: what
// happened and what to do.
const walCutShort = "the -wal holds less than the -shm beside it says (disk I/O error 522): " +
	"the -wal was deleted or cut short while a process had the database open. " +
	"The commits since the last checkpoint now live only in the -wal that process still has open: " +
	"stop the app cleanly, while nothing else has the file open, and its Close writes them into the database " +
	"(an app that is killed loses them); then run check again"

// sqliteShortRead is SQLite's extended result code SQLITE_IOERR_SHORT_READ.
const sqliteShortRead = 522

// isShortRead reports whether err is SQLite's SQLITE_IOERR_SHORT_READ,
// which reading a database whose -wal was cut short under a running
// process gives.
func isShortRead(err error) bool {
	var se interface{ Code() int }
	return errors.As(err, &se) && se.Code() == sqliteShortRead
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

// writeCheck writes check's report as text.
func (c *cli) writeCheck(r *checkJSON) {
	tw := newTable(c.stdout)
	fmt.Fprintf(tw, "database\t%s (%s)\n", r.Path, fmtBytes(r.FileBytes))
	integrity := "ok"
	if len(r.Integrity) != 1 || r.Integrity[0] != "ok" {
		integrity = "FAILED"
	}
	fmt.Fprintf(tw, "integrity\t%s\n", integrity)
	fmt.Fprintf(tw, "schema version\t%s\n", orDash(r.SchemaVersion))
	fmt.Fprintf(tw, "application id\t%#x\n", r.ApplicationID)
	fmt.Fprintf(tw, "journal mode\t%s\n", r.JournalMode)
	fmt.Fprintf(tw, "WAL\t%s\n", fmtBytes(r.WALBytes))
	if r.Jobs == nil {
		fmt.Fprintf(tw, "jobs\t-\n")
	} else {
		var jobs []string
		total := 0
		for _, st := range states {
			jobs = append(jobs, fmt.Sprintf("%d %s", r.Jobs[string(st)], st))
			total += r.Jobs[string(st)]
		}
		fmt.Fprintf(tw, "jobs\t%d: %s\n", total, strings.Join(jobs, ", "))
	}
	fmt.Fprintf(tw, "history rows\t%s\n", orDashInt(r.HistoryRows))
	fmt.Fprintf(tw, "idempotency keys\t%s\n", orDashInt(r.Keys))
	tw.Flush()
	for _, w := range r.Warnings {
		fmt.Fprintf(c.stdout, "warning: %s\n", w)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(c.stdout, "%s %s\n", c.paintCell(red, "problem:"), p)
	}
	if r.OK {
		fmt.Fprintln(c.stdout, c.paintCell(green, "ok"))
	}
}

// fmtBytes shows a size in bytes, KiB or MiB.
func fmtBytes(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// version runs "version".
func (c *cli) version(_ context.Context, args []string) error {
	fs := c.flagSet("version", "version")
	_, err := fs.parse(args, 0, 0)
	if err != nil {
		return err
	}
	v, extra := "(devel)", ""
	if info, ok := debug.ReadBuildInfo(); ok {
		if info.Main.Version != "" {
			v = info.Main.Version
		}
		extra = vcsInfo(info.Settings)
	}
	fmt.Fprintf(c.stdout, "litequeue %s%s %s %s/%s\n", v, extra, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// vcsInfo returns " (commit abc123def456)" from a binary's build settings,
// or "" when the build did not record one.
func vcsInfo(settings []debug.BuildSetting) string {
	var rev, modified string
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if rev == "" {
		return ""
	}
	return fmt.Sprintf(" (commit %.12s%s)", rev, modified)
}
