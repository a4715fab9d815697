package litequeue_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// TestQueue_RetentionRules finishes jobs of several queues and kinds at epoch
// under rules per queue, per kind, per kind on a queue and for good, and
// steps the clock to a millisecond before and to each job's end of
// retention, then ten years on: each job is purged exactly when the rule
// that applies to it says, and those kept forever never are.
func TestQueue_RetentionRules(t *testing.T) {
	t.Parallel()
	const forever = litequeue.KeepForever
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{
		Clock: clk, KeepFinished: time.Hour, DeadTTL: 2 * time.Hour,
		Retention: []litequeue.Retention{
			{Queue: "audit", KeepFinished: forever, DeadTTL: forever},
			{Kind: "report", KeepFinished: 10 * time.Hour},
			{Queue: "audit", Kind: "report", KeepFinished: 5 * time.Hour},
			{Kind: "ledger", DeadTTL: forever},
			{Queue: "audit", Kind: "ledger", DeadTTL: 3 * time.Hour},
			{Queue: "fast", KeepFinished: 30 * time.Minute},
			{Queue: "fast", Kind: "ledger", KeepFinished: 4 * time.Hour},
		},
	})
	// Jobs whose payload is "die" go dead, the others complete.
	finish := func(ctx context.Context, job *litequeue.Job) error {
		if string(job.Payload) == `"die"` {
			return litequeue.Permanent(errors.New("die"))
		}
		return nil
	}
	for _, kind := range []string{"mail", "report", "ledger", "audit"} {
		q.Handle(kind, finish)
	}
	tests := []struct {
		queue, kind, payload string
		keep                 time.Duration // from FinishedAt; forever: never purged
	}{
		{"default", "mail", "ok", time.Hour},         // no rule: KeepFinished
		{"default", "mail", "die", 2 * time.Hour},    // no rule: DeadTTL
		{"audit", "mail", "ok", forever},             // the queue's rule
		{"audit", "mail", "die", forever},            // the queue's rule
		{"default", "report", "ok", 10 * time.Hour},  // the kind's rule
		{"default", "report", "die", 2 * time.Hour},  // the kind's rule, its DeadTTL unset: DeadTTL
		{"audit", "report", "ok", 5 * time.Hour},     // the kind's rule on the queue, over both
		{"audit", "report", "die", 2 * time.Hour},    // ... its DeadTTL unset: DeadTTL, not the queue's forever
		{"default", "ledger", "die", forever},        // the kind's rule
		{"default", "ledger", "ok", time.Hour},       // the kind's rule, its KeepFinished unset
		{"audit", "ledger", "die", 3 * time.Hour},    // the kind's rule on the queue
		{"audit", "ledger", "ok", time.Hour},         // ... its KeepFinished unset: KeepFinished
		{"reports", "report", "ok", 10 * time.Hour},  // another queue: the kind's rule
		{"audit-2", "mail", "ok", time.Hour},         // a queue named alike: no rule
		{"default", "audit", "ok", time.Hour},        // a kind named as the queue: no rule
		{"fast", "mail", "ok", 30 * time.Minute},     // the queue's rule
		{"fast", "mail", "die", 2 * time.Hour},       // ... its DeadTTL unset: DeadTTL
		{"fast", "report", "ok", 10 * time.Hour},     // the kind's rule over the queue's shorter one
		{"fast", "ledger", "ok", 4 * time.Hour},      // the kind's rule on the queue over both shorter ones
		{"fast", "ledger", "die", 2 * time.Hour},     // ... its DeadTTL unset: DeadTTL, not the kind's forever
		{"audit", "unhandled", "pending", forever},   // never finished: never purged
		{"default", "unhandled", "pending", forever}, // never finished: never purged
	}
	ids := make([]int64, len(tests))
	for i, tt := range tests {
		ids[i] = enqueue(t, q, tt.kind, tt.payload, litequeue.OnQueue(tt.queue)).ID
	}
	if n := runDue(t, q); n != len(tests)-2 {
		t.Fatalf("%d runs, want %d", n, len(tests)-2)
	}
	check := func(at time.Duration) {
		t.Helper()
		clk.Set(epoch.Add(at))
		runDue(t, q)
		for i, tt := range tests {
			want := tt.keep == forever || at < tt.keep
			if got := exists(t, q, ids[i]); got != want {
				t.Errorf("at %v: %s job of kind %s on queue %s: kept %v, want %v", at, tt.payload, tt.kind, tt.queue, got, want)
			}
		}
	}
	for _, at := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour, 4 * time.Hour, 5 * time.Hour, 10 * time.Hour} {
		check(at - time.Millisecond)
		check(at)
	}
	check(10 * 365 * 24 * time.Hour)
}

// TestQueue_KeepForever keeps every finished job for good: a ten-year
// jump of the clock purges nothing.
func TestQueue_KeepForever(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk, KeepFinished: litequeue.KeepForever, DeadTTL: litequeue.KeepForever})
	q.Handle("ok", ok)
	q.Handle("doomed", doomed)
	done, dead := enqueue(t, q, "ok", nil), enqueue(t, q, "doomed", nil)
	runDue(t, q)
	clk.Add(10 * 365 * 24 * time.Hour)
	runDue(t, q)
	if !exists(t, q, done.ID) || !exists(t, q, dead.ID) || historyRows(t, q, dead.ID) != 1 {
		t.Fatalf("after ten years: completed kept %v, dead kept %v; want both, with their history", exists(t, q, done.ID), exists(t, q, dead.ID))
	}
}

// TestOpen_RetentionRefused refuses rules that cannot be meant and
// negative times other than KeepForever, naming the rule and the value.
func TestOpen_RetentionRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		opts  litequeue.Options
		want  string
		field bool // the error wraps a *FieldError
	}{
		{"empty rule", litequeue.Options{Retention: []litequeue.Retention{{KeepFinished: time.Hour}}},
			"retention rule 0: names neither a queue nor a kind", false},
		{"nothing set", litequeue.Options{Retention: []litequeue.Retention{{Queue: "a", KeepFinished: time.Hour}, {Kind: "k"}}},
			`retention rule 1: kind "k" sets neither KeepFinished nor DeadTTL`, false},
		{"duplicate", litequeue.Options{Retention: []litequeue.Retention{
			{Queue: "a", Kind: "k", KeepFinished: time.Hour}, {Queue: "b", DeadTTL: time.Hour}, {Queue: "a", Kind: "k", DeadTTL: time.Hour},
		}}, `retention rule 2: kind "k" on queue "a", as rule 0 does`, false},
		{"negative in a rule", litequeue.Options{Retention: []litequeue.Retention{{Queue: "a", DeadTTL: -time.Hour}}},
			"retention rule 0: dead_ttl -1h0m0s must not be negative", true},
		{"negative KeepFinished", litequeue.Options{KeepFinished: -2},
			"keep_finished -2ns must not be negative", true},
		{"negative DeadTTL", litequeue.Options{DeadTTL: -time.Hour},
			"dead_ttl -1h0m0s must not be negative", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "q.db")
			q, err := openBackend(t, path, tt.opts)
			if err == nil {
				q.Close()
				t.Fatalf("Open: no error, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Open: %v, want %q", err, tt.want)
			}
			if fe := (*litequeue.FieldError)(nil); errors.As(err, &fe) != tt.field {
				t.Errorf("Open: %v; wraps a *FieldError: %v, want %v", err, !tt.field, tt.field)
			}
		})
	}
}

// TestOpen_RetentionCopied checks that Open copies the rules: changing the
// caller's slice afterwards changes nothing.
func TestOpen_RetentionCopied(t *testing.T) {
	t.Parallel()
	clk := newMock()
	rules := []litequeue.Retention{{Queue: "keep", KeepFinished: litequeue.KeepForever}}
	q, _ := openQueue(t, litequeue.Options{Clock: clk, Retention: rules})
	rules[0].KeepFinished = time.Millisecond
	q.Handle("ok", ok)
	job := enqueue(t, q, "ok", nil, litequeue.OnQueue("keep"))
	runDue(t, q)
	clk.Add(365 * 24 * time.Hour)
	runDue(t, q)
	if !exists(t, q, job.ID) {
		t.Fatal("the job was purged after the caller changed its copy of the rules")
	}
	if diff := cmp.Diff([]litequeue.Retention{{Queue: "keep", KeepFinished: time.Millisecond}}, rules); diff != "" {
		t.Fatalf("Open changed the caller's rules (-want +got):\n%s", diff)
	}
}
