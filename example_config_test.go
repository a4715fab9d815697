package litequeue_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/litequeue/litequeue"
)

// LoadConfig reads the retry policies and the queue's settings from a
// litequeue.toml file; omitted keys keep their defaults, and a named
// policy's omitted keys inherit [retry]. The program adds what a file
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

	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), opts)
	if err != nil {
		log.Fatal(err)
	}
	q.Close()

	os.WriteFile(path, []byte("[retry]\nmax_tries = 80\n"), 0o600)
	_, err = litequeue.LoadConfig(path)
	fmt.Println(strings.TrimPrefix(err.Error(), dir+string(filepath.Separator)))
	// Output:
	// retry:    exponential from 1s, at most 1m0s, 8 tries, full jitter
	// payments: exponential from 1s, at most 1m0s, 12 tries, full jitter
	// dead letters kept 720h0m0s
	// litequeue.toml:2: retry: max_tries 80 is over the limit of 50
}
