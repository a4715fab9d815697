package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/litequeue/litequeue"
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
	Backup        bool     `json:"backup"` // a copy at rest, in journal mode delete: a sound backup when ok
	FileBytes     int64    `json:"file_bytes"`
	WALBytes      int64    `json:"wal_bytes"`
	// The counts are null when the file could not be counted.
	Jobs        map[string]int `json:"jobs"` // by state, every state present
	HistoryRows *int           `json:"history_rows"`
	Keys        *int           `json:"keys"`
	// Repaired is, with --repair, how many (queue, kind, state) counts
	// of the jobs differed from the recount and were rewritten.
	Repaired *int `json:"repaired,omitempty"`
}

// check defines the flags of "check" and returns the command.
func (c *cli) check(fs *flagSet) runFunc {
	asJSON := fs.jsonFlag()
	repair := fs.Bool("repair", false, "first recount the jobs and rewrite the counts that Stats reads where they differ")
	return func(ctx context.Context, _ []string) error {
		open := c.openRead
		if *repair {
			open = c.openWrite
		}
		q, err := open()
		if why := litequeue.ExplainShortRead(err); why != "" {
			return fmt.Errorf("%w\n%s", err, why)
		}
		if err != nil {
			return err
		}
		defer q.Close()
		var repaired *int
		if *repair {
			n, err := q.RecountJobs(ctx)
			if err != nil {
				return err
			}
			repaired = &n
		}
		h, err := q.Health(ctx)
		if err != nil {
			return err
		}
		r := toCheckJSON(c.dbName(), h)
		r.Repaired = repaired
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
}

// toCheckJSON returns the JSON form of h, the health of the file at path.
func toCheckJSON(path string, h *litequeue.Health) *checkJSON {
	r := &checkJSON{
		Path: path, OK: h.OK(), Problems: h.Problems, Warnings: h.Warnings, Integrity: h.Integrity,
		ApplicationID: h.ApplicationID, JournalMode: h.JournalMode, Backup: h.Backup, FileBytes: h.FileBytes, WALBytes: h.WALBytes,
		HistoryRows: optCount(h.HistoryRows), Keys: optCount(h.Keys),
	}
	if h.SchemaVersion > 0 {
		r.SchemaVersion = strconv.Itoa(h.SchemaVersion)
	}
	if h.Jobs != nil {
		r.Jobs = make(map[string]int, len(h.Jobs))
		for st, n := range h.Jobs {
			r.Jobs[string(st)] = n
		}
	}
	return r
}

// optCount returns a count of Health, nil for one it could not make.
func optCount(n int) *int {
	if n < 0 {
		return nil
	}
	return &n
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
	if r.Repaired != nil {
		fmt.Fprintf(tw, "counts\t%d rewritten from a recount\n", *r.Repaired)
	}
	tw.Flush()
	for _, w := range r.Warnings {
		fmt.Fprintf(c.stdout, "warning: %s\n", w)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(c.stdout, "%s %s\n", c.paintCell(red, "problem:"), p)
	}
	switch {
	case r.OK && r.Backup:
		fmt.Fprintln(c.stdout, c.paintCell(green, "ok")+": a sound backup (journal mode delete, as VACUUM INTO and litequeue backup write it; opening it for work switches it to WAL)")
	case r.OK:
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
