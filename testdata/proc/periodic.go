package main

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/postgres"
)

// periodic is "proc periodic DB START": it opens DB on a mock clock set to
// START (Unix ms), registers the schedule "quarter" ("*/15 * * * *", kind
// "tick", handled by a handler that does nothing), prints "ready", and
// then reads commands on stdin, one a line:
//
//	at MS    set the clock to MS, call RunDue, print "ran N"
//
// It returns at the end of stdin, or on the first error; errors logged by
// the queue are one too.
func periodic(ctx context.Context, db, start string, logs *errorsSeen) error {
	startMS, err := strconv.ParseInt(start, 10, 64)
	if err != nil {
		return err
	}
	clk := clock.NewMock()
	clk.Set(time.UnixMilli(startMS))
	opts := litequeue.Options{Clock: clk, Logger: slog.New(logs)}
	var q *litequeue.Queue
	if strings.HasPrefix(db, "postgres://") {
		q, err = postgres.Open(ctx, db, opts)
	} else {
		q, err = litequeue.Open(db, opts)
	}
	if err != nil {
		return err
	}
	defer q.Close()
	q.Handle("tick", func(ctx context.Context, job *litequeue.Job) error { return nil })
	if err := q.Periodic(ctx, "quarter", "*/15 * * * *", "tick", nil); err != nil {
		return err
	}
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		ms, ok := strings.CutPrefix(in.Text(), "at ")
		if !ok {
			return fmt.Errorf("unknown command %q", in.Text())
		}
		at, err := strconv.ParseInt(ms, 10, 64)
		if err != nil {
			return err
		}
		clk.Set(time.UnixMilli(at))
		n, err := q.RunDue(ctx)
		if err != nil {
			return err
		}
		logs.mu.Lock()
		logged := logs.n
		logs.mu.Unlock()
		if logged > 0 {
			return fmt.Errorf("%d errors logged", logged)
		}
		fmt.Println("ran", n)
	}
	return in.Err()
}
