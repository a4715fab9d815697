package litequeue_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/litequeue/litequeue"
)

// LoadConfig reads the retry policies, the queue's settings and the flow
// control of kinds from a litequeue.toml file; omitted keys keep their
// defaults, and a named policy's omitted keys inherit [retry]. Handle
// starts a kind's handler from its [kinds.NAME] table, and the
// HandlerOptions given to it win. The program adds what a file
// cannot hold (Clock, Logger, OnEvent) and opens the queue with them. An
// error names the file, the line and the key.
func ExampleLoadConfig() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "litequeue.toml")
	os.WriteFile(path, []byte(`
[retry]
base = "1s"
ceiling = "1m"

[retry.payments]
max_tries = 12

[queue]
dead_ttl = "30d"

[kinds.report]
max_running = 1
rate_limit = 100
rate_per = "1m"

[kinds.charge]
breaker = true
`), 0o600)

	opts, err := litequeue.LoadConfig(path)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("retry:    %s from %v, at most %v, %d tries, %s jitter\n",
		opts.Retry.Backoff, opts.Retry.Base, opts.Retry.Ceiling, opts.Retry.MaxTries, opts.Retry.Jitter)
	p := opts.Policies["payments"]
	fmt.Printf("payments: %s from %v, at most %v, %d tries, %s jitter\n", p.Backoff, p.Base, p.Ceiling, p.MaxTries, p.Jitter)
	fmt.Println("dead letters kept", opts.DeadTTL)
	r := opts.Kinds["report"]
	fmt.Printf("report:   %d at a time, %d starts in %v\n", r.MaxRunning, r.RateLimit, r.RatePer)
	b := opts.Kinds["charge"].Breaker
	fmt.Printf("charge:   breaker opens at %d failures in %v, %v of the runs\n", b.Failures, b.Window, b.Ratio)

	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), opts)
	if err != nil {
		log.Fatal(err)
	}
	q.Handle("report", renderReport, litequeue.MaxRunning(2)) // wins over max_running; the rate stays
	q.Close()

	os.WriteFile(path, []byte("[retry]\nmax_tries = 80\n"), 0o600)
	_, err = litequeue.LoadConfig(path)
	fmt.Println(strings.TrimPrefix(err.Error(), dir+string(filepath.Separator)))
	// Output:
	// retry:    exponential from 1s, at most 1m0s, 8 tries, full jitter
	// payments: exponential from 1s, at most 1m0s, 12 tries, full jitter
	// dead letters kept 720h0m0s
	// report:   1 at a time, 100 starts in 1m0s
	// charge:   breaker opens at 20 failures in 1m0s, 0.5 of the runs
	// litequeue.toml:2: retry: max_tries 80 is over the limit of 50
}

// renderReport stands for a handler of the example.
func renderReport(ctx context.Context, job *litequeue.Job) error { return nil }
