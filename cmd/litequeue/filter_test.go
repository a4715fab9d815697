package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// idsOf returns the IDs of jobs in JSON.
func idsOf(jobs []jobJSON) []int64 {
	ids := []int64{}
	for _, j := range jobs {
		ids = append(ids, j.ID)
	}
	return ids
}

// TestFilterFlags: --after, --before and --error-contains select jobs on
// list, dead list and dead retry --all, as litequeue.Filter's fields do.
func TestFilterFlags(t *testing.T) {
	onBoth(t, func(t *testing.T, db string, q *litequeue.Queue) {
		run := on(t, db)
		q.Handle("mail", litequeue.JSON(func(ctx context.Context, job *litequeue.Job, to string) error {
			if to == "bounce" {
				return litequeue.Permanent(errors.New("smtp: 550 Mailbox unavailable"))
			}
			return litequeue.Permanent(errors.New("dial tcp: i/o timeout"))
		}))
		var ids []int64
		for _, to := range []string{"bounce", "slow", "bounce", "slow"} {
			j, err := q.Enqueue(t.Context(), "mail", to)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, j.ID)
		}
		if _, err := q.RunDue(t.Context()); err != nil {
			t.Fatal(err)
		}
		id := func(i int) string { return fmt.Sprint(ids[i]) }
		for _, tc := range []struct {
			args []string
			want []int64
		}{
			{[]string{"list", "--error-contains", "MAILBOX"}, []int64{ids[0], ids[2]}},
			{[]string{"list", "--state", "dead", "--after", id(0), "--before", id(3)}, []int64{ids[1], ids[2]}},
			{[]string{"dead", "list", "--after", id(1)}, []int64{ids[2], ids[3]}},
			{[]string{"dead", "list", "--error-contains", "i/o", "--before", id(3)}, []int64{ids[1]}},
			{[]string{"list", "--error-contains", "100%_"}, []int64{}}, // wildcards match as written
		} {
			r := run(append(tc.args, "--json")...)
			if diff := cmp.Diff(tc.want, idsOf(decode[[]jobJSON](t, r))); diff != "" {
				t.Errorf("litequeue %s (-want +got):\n%s", strings.Join(tc.args, " "), diff)
			}
		}
		if r := run("dead", "list", "--limit", "1"); !strings.Contains(r.stderr, "--after "+id(0)) {
			t.Errorf("a page of dead list does not say how to get the next: %q", r.stderr)
		}

		got := decode[bulkJSON](t, run("dead", "retry", "--all", "--error-contains", "timeout", "--before", id(3), "--yes", "--json"))
		if got.Matched != 1 || got.Done == nil || *got.Done != 1 {
			t.Errorf("dead retry --all --error-contains --before = %+v, want 1 replayed", got)
		}
		if diff := cmp.Diff([]string{"dead", "pending", "dead", "dead"}, jobStates(t, q, ids...)); diff != "" {
			t.Errorf("states after the replay (-want +got):\n%s", diff)
		}
		if r := run("dead", "retry", "--all", "--error-contains", "Mailbox", "--dry-run"); !strings.Contains(r.stdout, `2 dead jobs with an error containing "Mailbox"`) {
			t.Errorf("dead retry --all --dry-run said %q", r.stdout)
		}

		c := testCLI("")
		c.db = db
		for _, args := range [][]string{{"list", "--after", "-1"}, {"dead", "list", "--before", "-2"}} {
			if r := runCLI(t, c, args...); r.code != exitUsage || !strings.Contains(r.stderr, "negative") {
				t.Errorf("litequeue %s: exit %d, %q; want 2, naming the negative ID", strings.Join(args, " "), r.code, r.stderr)
			}
		}
	})
}
