package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/internal/pgtest"
	"github.com/litequeue/litequeue/postgres"
)

// onBoth runs test on a new file and on a new database of the test
// server (skipped without one), each named by db, as --db takes it, with
// an app's Queue q open on it.
func onBoth(t *testing.T, test func(t *testing.T, db string, q *litequeue.Queue)) {
	t.Run("file", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "jobs.db")
		q, err := litequeue.Open(path, litequeue.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		test(t, path, q)
	})
	t.Run("server", func(t *testing.T) {
		t.Parallel()
		dsn := pgtest.DSN(t)
		q, err := postgres.Open(t.Context(), dsn, litequeue.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { q.Close() })
		test(t, dsn, q)
	})
}

// on returns a function that runs the command on db and fails the test
// unless it exits 0.
func on(t *testing.T, db string) func(args ...string) result {
	return func(args ...string) result {
		t.Helper()
		c := testCLI("")
		c.db = db
		return mustRun(t, c, args...)
	}
}

// decode decodes the JSON that a command wrote into v.
func decode[T any](t *testing.T, r result) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("%v in the JSON %q", err, r.stdout)
	}
	return v
}

// jobStates returns the state of each job with the given IDs, or "gone".
func jobStates(t *testing.T, q *litequeue.Queue, ids ...int64) []string {
	t.Helper()
	var out []string
	for _, id := range ids {
		j, err := q.Get(context.Background(), id)
		switch {
		case errors.Is(err, litequeue.ErrNotFound):
			out = append(out, "gone")
		case err != nil:
			t.Fatal(err)
		default:
			out = append(out, string(j.State))
		}
	}
	return out
}

// bulkJSON is the JSON of a bulk act.
type bulkJSON struct {
	Matched int       `json:"matched"`
	Done    *int      `json:"done"`
	DryRun  bool      `json:"dry_run"`
	Jobs    []jobJSON `json:"jobs"`
}

// enqueueJobs enqueues a job of each kind, on queue "default", and returns
// their IDs.
func enqueueJobs(t *testing.T, q *litequeue.Queue, kinds ...string) []int64 {
	t.Helper()
	var ids []int64
	for _, kind := range kinds {
		j, err := q.Enqueue(context.Background(), kind, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	return ids
}

// TestCancelDelete_All cancels jobs by filter, then deletes them, each
// after a count: a dry run shows them and changes nothing, no terminal and
// no --yes refuses, --yes acts; --json says what was done.
func TestCancelDelete_All(t *testing.T) {
	onBoth(t, func(t *testing.T, db string, q *litequeue.Queue) {
		run := on(t, db)
		ids := enqueueJobs(t, q, "report", "email", "report", "report")

		dry := decode[bulkJSON](t, run("cancel", "--all", "--kind", "report", "--after", fmt.Sprint(ids[0]), "--dry-run", "--json"))
		if dry.Matched != 2 || !dry.DryRun || len(dry.Jobs) != 2 || dry.Jobs[0].ID != ids[2] || *dry.Done != 0 {
			t.Errorf("cancel --dry-run --json = %+v, want 2 matched from job %d, none cancelled", dry, ids[2])
		}
		c := testCLI("")
		c.db = db
		if r := runCLI(t, c, "cancel", "--all", "--kind", "report"); r.code != exitUsage || !strings.Contains(r.stderr, "--yes") {
			t.Errorf("cancel --all without a terminal: exit %d, %q; want 2 and a word of --yes", r.code, r.stderr)
		}
		if diff := cmp.Diff([]string{"pending", "pending", "pending", "pending"}, jobStates(t, q, ids...)); diff != "" {
			t.Fatalf("states after the dry run and the refusal (-want +got):\n%s", diff)
		}

		got := decode[bulkJSON](t, run("cancel", "--all", "--kind", "report", "--yes", "--json"))
		if got.Matched != 3 || got.Done == nil || *got.Done != 3 || got.DryRun {
			t.Errorf("cancel --all --json = %+v, want 3 matched and cancelled", got)
		}
		if diff := cmp.Diff([]string{"cancelled", "pending", "cancelled", "cancelled"}, jobStates(t, q, ids...)); diff != "" {
			t.Errorf("states after cancel --all (-want +got):\n%s", diff)
		}
		if r := run("cancel", "--all", "--queue", "default", "--yes"); r.stdout != "1 pending job on queue default\ncancelled 1 job\n" {
			t.Errorf("cancel --all said %q", r.stdout)
		}

		for _, args := range [][]string{{"--all", "--kind", "report"}, {"--all", "--state", "pending"}, {"--all", "--state", "bogus"}} {
			r := runCLI(t, c, append([]string{"delete"}, args...)...)
			if r.code != exitUsage || !strings.Contains(r.stderr, "state") {
				t.Errorf("delete %s: exit %d, %q; want 2 and a word of the state", strings.Join(args, " "), r.code, r.stderr)
			}
		}
		got = decode[bulkJSON](t, run("delete", "--all", "--state", "cancelled", "--kind", "report", "--yes", "--json"))
		if got.Matched != 3 || got.Done == nil || *got.Done != 3 {
			t.Errorf("delete --all --json = %+v, want 3 matched and deleted", got)
		}
		if diff := cmp.Diff([]string{"gone", "cancelled", "gone", "gone"}, jobStates(t, q, ids...)); diff != "" {
			t.Errorf("states after delete --all (-want +got):\n%s", diff)
		}
		if r := runCLI(t, c, "cancel", "--kind", "report", "5"); r.code != exitUsage || !strings.Contains(r.stderr, "go with --all") {
			t.Errorf("cancel with IDs and a filter: exit %d, %q", r.code, r.stderr)
		}
	})
}

// TestCommands_JSON: every write and dry run writes one JSON object of
// what it did with --json.
func TestCommands_JSON(t *testing.T) {
	onBoth(t, func(t *testing.T, db string, q *litequeue.Queue) {
		run := on(t, db)
		q.Handle("doomed", func(context.Context, *litequeue.Job) error { return litequeue.Permanent(errors.New("no")) })
		ids := enqueueJobs(t, q, "doomed", "doomed")
		if _, err := q.RunDue(t.Context()); err != nil {
			t.Fatal(err)
		}
		j, err := q.Enqueue(t.Context(), "later", nil, litequeue.Delay(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
		a, later := fmt.Sprint(ids[0]), fmt.Sprint(ids[2])
		for _, tc := range []struct {
			args []string
			want map[string]any
		}{
			{[]string{"dead", "retry", a, "--dry-run"}, map[string]any{"dry_run": true, "would_replay": []any{float64(ids[0])}}},
			{[]string{"dead", "retry", a}, map[string]any{"replayed": []any{float64(ids[0])}}},
			{[]string{"run-now", later}, map[string]any{"due_now": []any{float64(ids[2])}}},
			{[]string{"cancel", a, later}, map[string]any{"cancelled": []any{float64(ids[0]), float64(ids[2])}, "stopping": []any{}}},
			{[]string{"delete", a}, map[string]any{"deleted": []any{float64(ids[0])}}},
			{[]string{"dead", "purge", "--dry-run"}, map[string]any{"matched": float64(1), "done": float64(0), "dry_run": true}},
			{[]string{"dead", "purge", "--yes"}, map[string]any{"matched": float64(1), "done": float64(1), "dry_run": false}},
			{[]string{"pause", "--queue", "default"}, map[string]any{"queue": "default", "paused": true, "was_paused": false}},
			{[]string{"resume", "--queue", "default"}, map[string]any{"queue": "default", "paused": false, "was_paused": true}},
			{[]string{"resume", "--kind", "k"}, map[string]any{"kind": "k", "paused": false, "was_paused": false}},
			{[]string{"breaker", "reset", "doomed"}, map[string]any{"kind": "doomed", "was": "closed"}},
		} {
			r := run(append(tc.args, "--json")...)
			if diff := cmp.Diff(tc.want, decode[map[string]any](t, r)); diff != "" {
				t.Errorf("litequeue %s --json (-want +got):\n%s", strings.Join(tc.args, " "), diff)
			}
		}
		if diff := cmp.Diff([]string{"gone", "gone", "cancelled"}, jobStates(t, q, ids...)); diff != "" {
			t.Errorf("states (-want +got):\n%s", diff)
		}
	})
}
