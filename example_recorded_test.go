package litequeue_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/litequeue/litequeue"
)

// A worker records the policies it runs with; a tool without handlers,
// such as a dashboard, reads them back: what each kind resolved to, and
// who recorded it.
func ExampleQueue_RecordedPolicies() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "jobs.db")
	ctx := context.Background()

	worker, err := litequeue.Open(path, litequeue.Options{
		Policies: map[string]litequeue.Policy{"payments": {Base: 5 * time.Second, MaxTries: 12}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer worker.Close()
	worker.Handle("charge", func(ctx context.Context, job *litequeue.Job) error { return nil },
		litequeue.UsePolicy("payments"), litequeue.WithTimeout(30*time.Second), litequeue.MaxRunning(4))
	if _, err := worker.RunDue(ctx); err != nil { // records them, as Work does at its start
		log.Fatal(err)
	}

	tool, err := litequeue.OpenReadOnly(path, litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer tool.Close()
	policies, err := tool.RecordedPolicies(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range policies {
		fmt.Printf("%s %q: %s from %v, %d tries", p.Scope, p.Name, p.Policy.Backoff, p.Policy.Base, p.Policy.MaxTries)
		if p.Scope == "kind" {
			fmt.Printf("; policy %q, timeout %v, max running %d", p.UsesPolicy, p.Timeout, p.Kind.MaxRunning)
		}
		fmt.Println("; by this process:", p.PID == os.Getpid())
	}
	// Output:
	// default "": exponential from 2s, 8 tries; by this process: true
	// policy "payments": exponential from 5s, 12 tries; by this process: true
	// kind "charge": exponential from 5s, 12 tries; policy "payments", timeout 30s, max running 4; by this process: true
}

// A kind's flow control in a few words, as the dashboard and the
// litequeue command show it.
func ExampleKindOptions_String() {
	k := litequeue.KindOptions{MaxRunning: 4, RateLimit: 10, RatePer: time.Minute,
		Breaker: &litequeue.Breaker{Failures: 20, Ratio: 0.5, Window: time.Minute, Cooldown: 30 * time.Second, MaxCooldown: 10 * time.Minute}}
	fmt.Println(k)
	fmt.Printf("%q\n", litequeue.KindOptions{})
	// Output:
	// at most 4 running, 10 starts per 1m, breaker at 20 failures in 1m (50% of runs), open 30s to 10m
	// ""
}
