package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/litequeue/litequeue"
)

// expire is "proc expire DB LATE": the other process of the expiry test
// (expire_unix_test.go). On the real clock it handles kind "timed" and calls
// RunDue once: the claim is to expire job LATE, enqueued by the test with
// an expiry already past, before it claims anything. Each run prints
// "ran ID STATE", STATE being job LATE's state as the handler sees it,
// and the end prints "done".
func expire(ctx context.Context, q *litequeue.Queue, args []string) error {
	if len(args) != 1 {
		return errors.New("usage: proc expire DB LATE")
	}
	late, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil {
		return err
	}
	q.Handle("timed", func(ctx context.Context, job *litequeue.Job) error {
		j, err := q.Get(ctx, late)
		if err != nil {
			return litequeue.Permanent(err)
		}
		fmt.Println("ran", job.ID, j.State)
		return nil
	})
	if _, err := q.RunDue(ctx); err != nil {
		return err
	}
	fmt.Println("done")
	return nil
}
