package litequeue_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/litequeue/litequeue"
)

// Payloads sealed at rest, and a key rotated: the new key goes first, and
// the old one stays after it until no job sealed with it is left. A job
// whose key is gone dies with the ErrorClass "sealed"; its handler never
// sees it.
func ExampleOptions_sealKeys() {
	dir, _ := os.MkdirTemp("", "litequeue-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "jobs.db")
	// Real keys are 32 bytes from crypto/rand, kept out of the code.
	k1 := litequeue.SealKey{ID: "k1", Key: bytes.Repeat([]byte{1}, litequeue.SealKeySize)}
	k2 := litequeue.SealKey{ID: "k2", Key: bytes.Repeat([]byte{2}, litequeue.SealKeySize)}
	ctx := context.Background()
	open := func(keys ...litequeue.SealKey) *litequeue.Queue {
		q, err := litequeue.Open(path, litequeue.Options{SealKeys: keys})
		if err != nil {
			log.Fatal(err)
		}
		q.Handle("note", func(ctx context.Context, job *litequeue.Job) error {
			key, _ := job.Sealed()
			fmt.Printf("job %d (key %s): %s\n", job.ID, key, job.Payload)
			return nil
		})
		return q
	}

	q := open(k1)
	if _, err := q.Enqueue(ctx, "note", "sealed with k1"); err != nil {
		log.Fatal(err)
	}
	if _, err := q.Enqueue(ctx, "note", "also sealed with k1", litequeue.Delay(24*time.Hour)); err != nil {
		log.Fatal(err)
	}
	q.Close()

	q = open(k2, k1) // rotate: k2 seals, k1 still opens
	job, err := q.Enqueue(ctx, "note", "sealed with k2")
	if err != nil {
		log.Fatal(err)
	}
	key, opened := job.Sealed()
	fmt.Println("new job sealed with", key, opened)
	if _, err := q.RunDue(ctx); err != nil {
		log.Fatal(err)
	}
	q.Close()

	q = open(k2) // k1 dropped too early: its last job cannot open
	defer q.Close()
	if err := q.RunNow(ctx, 2); err != nil {
		log.Fatal(err)
	}
	if _, err := q.RunDue(ctx); err != nil {
		log.Fatal(err)
	}
	dead, err := q.Get(ctx, 2)
	if err != nil {
		log.Fatal(err)
	}
	key, opened = dead.Sealed()
	fmt.Printf("job 2 is %s, sealed with %s, opened %v\n", dead.State, key, opened)
	history, err := q.History(ctx, 2)
	if err != nil {
		log.Fatal(err)
	}
	last := history[len(history)-1] // after RunNow's row
	fmt.Printf("%s: %s\n", last.ErrorClass, last.Error)
	// Output:
	// new job sealed with k2 true
	// job 1 (key k1): "sealed with k1"
	// job 3 (key k2): "sealed with k2"
	// job 2 is dead, sealed with k1, opened false
	// sealed: litequeue: payload sealed with key "k1" does not open: no key with that ID (the Queue's SealKeys are "k2")
}
