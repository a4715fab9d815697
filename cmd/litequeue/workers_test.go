package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/litequeue/litequeue"
)

// TestWorkers lists the app's two Work loops, on the file and on the
// server: none before they start, both with their options while they
// run, silent on a clock WorkerSilentAfter on, none once they returned.
func TestWorkers(t *testing.T) {
	onBoth(t, func(t *testing.T, db string, q *litequeue.Queue) {
		run := on(t, db)
		if got := run("workers").stdout; got != "no workers\n" {
			t.Errorf("workers with none: %q", got)
		}
		if got := run("workers", "--json").stdout; got != "[]\n" {
			t.Errorf("workers --json with none: %q", got)
		}
		q.Handle("email.send", func(context.Context, *litequeue.Job) error { return nil })
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 2)
		go func() {
			done <- q.Work(ctx, litequeue.WorkerOptions{Queues: []string{"emails"}, Concurrency: 2, Name: "mailer"})
		}()
		go func() { done <- q.Work(ctx, litequeue.WorkerOptions{Concurrency: 5, Name: "everything"}) }()
		var got []workerJSON
		for deadline := time.Now().Add(10 * time.Second); len(got) < 2; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("workers --json did not list both Work loops in 10s: %+v", got)
			}
			got = decode[[]workerJSON](t, run("workers", "--json"))
		}
		host, _ := os.Hostname()
		want := []workerJSON{
			{Name: "everything", Host: host, PID: os.Getpid(), Queues: []string{}, Kinds: []string{"email.send"}, Concurrency: 5},
			{Name: "mailer", Host: host, PID: os.Getpid(), Queues: []string{"emails"}, Kinds: []string{"email.send"}, Concurrency: 2},
		}
		if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(workerJSON{}, "ID", "Started", "LastSeen"),
			cmpopts.SortSlices(func(a, b workerJSON) bool { return a.Name < b.Name })); diff != "" {
			t.Errorf("workers --json (-want +got):\n%s", diff)
		}
		text := run("workers").stdout
		for _, w := range got {
			line := w.ID + "  " + w.Name
			if !strings.Contains(text, line) || !strings.Contains(text, "0/"+map[string]string{"mailer": "2", "everything": "5"}[w.Name]) {
				t.Errorf("workers does not show %s (%q) with its concurrency:\n%s", w.Name, line, text)
			}
		}
		if strings.Count(text, " live\n") != 2 || !strings.Contains(text, "emails") || !strings.Contains(text, "(all)") {
			t.Errorf("workers does not show both live, with their queues:\n%s", text)
		}

		later := testCLI("")
		later.db = db
		mock := clock.NewMock()
		mock.Set(time.Now().Add(litequeue.WorkerSilentAfter + time.Minute))
		later.clock = mock
		for _, w := range decode[[]workerJSON](t, mustRun(t, later, "workers", "--json")) {
			if !w.Silent {
				t.Errorf("%s is not silent %v after its last record", w.Name, litequeue.WorkerSilentAfter+time.Minute)
			}
		}
		if text := mustRun(t, later, "workers").stdout; strings.Count(text, " silent\n") != 2 {
			t.Errorf("workers later does not mark both silent:\n%s", text)
		}

		stop()
		for range 2 {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		if got := run("workers").stdout; got != "no workers\n" {
			t.Errorf("workers after both Work loops returned: %q", got)
		}
	})
}
