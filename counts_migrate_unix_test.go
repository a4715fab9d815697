//go:build unix

package litequeue_test

import (
	"database/sql"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// TestOpen_MigratesVersion5Counts_Killed kills with SIGKILL, at growing
// moments, a litequeue process that opens a file of version 5 with
// 200,000 jobs, until one has finished the migration: the file then opens
// with every job as it was, its counts right, and Stats as a scan of
// version 5 read them. A kill before the commit leaves version 5 (the
// migration is one transaction), one after it this binary's version.
func TestOpen_MigratesVersion5Counts_Killed(t *testing.T) {
	fileOnly(t, "the file's schema versions")
	t.Parallel()
	bin := buildCommand(t)
	path := oldFile(t, 5)
	sqliteFile(t, path, manyJobsSQL(200_000))
	jobsBefore := jobSums(t, path)
	scanned := readOnlyStats(t, path)
	killedAt5 := 0
	for delay := 5 * time.Millisecond; ; delay += 20 * time.Millisecond {
		cmd := exec.Command(bin, "--db", path, "check", "--repair")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay) // a moment to kill at, not a wait for a condition
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if fileVersion(t, path) == fileSchemaVersion {
			break
		}
		killedAt5++
		if delay > 30*time.Second {
			t.Fatal("no process finished the migration")
		}
	}
	t.Logf("%d processes killed before the migration's commit", killedAt5)
	if killedAt5 == 0 {
		t.Error("no process was killed before the migration's commit")
	}
	if diff := cmp.Diff(jobsBefore, jobSums(t, path)); diff != "" {
		t.Errorf("jobs after the kills (-before +after):\n%s", diff)
	}
	q := openAt(t, path, litequeue.Options{Clock: newMock()})
	checkStatsAsScanned(t, q, scanned, "after the kills")
}

// jobSums sums the IDs of the file's jobs per queue, kind and state.
func jobSums(t *testing.T, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var sums []string
	err = sqlSelect(db, &sums, `SELECT queue || ' ' || kind || ' ' || state || ' ' || count(*) || ' ' || sum(id) || ' ' || coalesce(sum(run_at), 0)
		FROM litequeue_jobs GROUP BY queue, kind, state ORDER BY queue, kind, state`)
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

// fileVersion reads the schema version of the file at path.
func fileVersion(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	if err := db.QueryRow(`SELECT value FROM litequeue_meta WHERE name = 'schema_version'`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// sqlSelect reads the one column of query's rows into dest.
func sqlSelect(db *sql.DB, dest *[]string, query string) error {
	rows, err := db.Query(query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		*dest = append(*dest, s)
	}
	return rows.Err()
}
