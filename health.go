package litequeue

import (
	"context"
	"fmt"

	"github.com/litequeue/litequeue/internal/store"
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

// jobStates are the job states, in the order of a job's life.
var jobStates = []State{Waiting, Pending, Running, Completed, Dead, Discarded, Cancelled, Expired}

// Health checks the queue's file while others work on it, for an operator
// or a monitor: SQLite's integrity check, the schema version, the
// application_id and journal mode, the sizes of the file and its -wal
// (a warning past 64 MiB: checkpoints are not keeping up), their
// permissions (a warning if users other than the owner may read or write
// them; a problem if the file's owner may not write its -wal or -shm,
// which fails every write), the rows of litequeue's tables, and the
// counts of the jobs kept for [Queue.Stats] against a recount (a problem
// for each that differs, as the app's own SQL on a file's jobs leaves:
// see [Queue.RecountJobs]). Each read runs on its own,
// so that one a damaged file fails is a problem in the report, not the
// end of it; an error is returned only when the report could not be made
// (the [Queue] is closed, the file cannot be stat'ed). It only reads, also
// on a Queue from [OpenReadOnly]. On a server (package postgres) it reads
// the schema version, the rows and the counts only: the rest is a file's (the server
// checks its own pages).
func (q *Queue) Health(ctx context.Context) (*Health, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	eh, err := q.st.eng.Health(ctx)
	if err != nil {
		return nil, fmt.Errorf("litequeue: health: %w", err)
	}
	h := &Health{Integrity: eh.Integrity, SchemaVersion: eh.SchemaVersion, ApplicationID: eh.ApplicationID,
		JournalMode: eh.JournalMode, Backup: eh.Backup, FileBytes: eh.FileBytes, WALBytes: eh.WALBytes,
		Problems: append([]string{}, eh.ReadProblems...), Warnings: append([]string{}, eh.Warnings...)}
	// The counts run on the read pool itself, as the engine's reads do:
	// a report is rare, and a server that is away is one of its problems.
	c := &rowCount{ctx: ctx, db: q.st.info.Reads, h: h, explain: eh.Explain}
	c.jobs()
	c.counts(q.st.reads, q.st.info.Uncounted)
	h.HistoryRows = c.count(store.HistoryRows, "history rows")
	h.Keys = c.count(store.KeyRows, "idempotency keys")
	h.Problems = append(h.Problems, eh.FileProblems...)
	if c.explain != "" {
		h.Problems = append([]string{c.explain}, h.Problems...)
	}
	return h, nil
}

// rowCount counts the rows of litequeue's tables for one run of Health.
type rowCount struct {
	ctx     context.Context
	db      store.Execer
	h       *Health
	explain string // why a read failed, to put first (see ExplainShortRead)
}

// problem adds a problem to the report, noting an error among args that
// says the -wal was cut short.
func (c *rowCount) problem(format string, args ...any) {
	for _, a := range args {
		if err, ok := a.(error); ok && c.explain == "" {
			c.explain = sqlite.ExplainShortRead(err)
		}
	}
	c.h.Problems = append(c.h.Problems, fmt.Sprintf(format, args...))
}

// jobs counts the jobs by state; a state litequeue does not know is a
// problem.
func (c *rowCount) jobs() {
	counts, err := store.JobsByState(c.ctx, c.db)
	if err != nil {
		c.problem("count jobs: %v", err)
		return
	}
	jobs := make(map[State]int, len(jobStates))
	for _, st := range jobStates {
		jobs[st] = 0
	}
	for _, n := range counts {
		if _, known := jobs[State(n.State)]; !known {
			c.problem("%d jobs are in the unknown state %q", n.N, n.State)
		}
		jobs[State(n.State)] = n.N
	}
	c.h.Jobs = jobs
}

// count runs read, a count of what, and returns its result; -1 if it
// failed.
func (c *rowCount) count(read func(context.Context, store.Execer) (int, error), what string) int {
	n, err := read(c.ctx, c.db)
	if err != nil {
		c.problem("count %s: %v", what, err)
		return -1
	}
	return n
}

// ExplainShortRead returns what happened, and what to do, when err, from
// opening or reading a file, is SQLite's SQLITE_IOERR_SHORT_READ ("disk
// I/O error (522)"), which a file gives whose -wal was deleted or cut
// short while a process had it open; "" for any other error.
// [Queue.Health] puts the same explanation first in its [Health.Problems].
func ExplainShortRead(err error) string { return sqlite.ExplainShortRead(err) }
