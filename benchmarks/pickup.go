package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
)

// The pickup workload: 16 workers in this process, idle, and jobs
// enqueued on the same store by another process — this binary again, run
// with -produce — at a steady rate. Latency is from the enqueue call in
// the producer to the handler's start here, both read from the wall clock
// of the one machine: the producer stamps it into each payload. It shows
// how soon a worker learns of another process's writes, which no
// in-process wake-up can tell it of.

// pickupPeers are the peers whose store a second process can share; why
// the others cannot.
var pickupPeers = map[string]string{
	"litequeue":       "",
	"goqite":          "",
	"river":           "",
	"river-tuned":     "",
	"asynq":           "",
	"asynq-nopersist": "",
	"backlite":        "backlite v0.6.0's dispatcher learns only of its own process's tasks: with none due it waits for an Add in its process and never reads the table, so another process's tasks would wait forever",
}

func runPickup(ctx context.Context, open opener, cfg config) (result, error) {
	var res result
	why, ok := pickupPeers[cfg.peer]
	switch {
	case !ok:
		return res, fmt.Errorf("%w: pickup runs on the peers whose store a second process can share: the PostgreSQL peers' database is their run's own", errUnsupported)
	case why != "":
		return res, fmt.Errorf("%w: %s", errUnsupported, why)
	}
	n := int(float64(cfg.rate) * cfg.latencyFor.Seconds())
	s, p, err := startPaced(ctx, open, cfg, n, (*tracker).trackPickup)
	if err != nil {
		return res, err
	}
	err = errors.Join(produceElsewhere(ctx, cfg, n), s.t.wait(ctx))
	p.stop(&res, n)
	res.CPUusPerJob = 0 // CPU of this process over the paced period, not per job
	if err != nil {
		s.abort()
		return res, err
	}
	res.P50ms, res.P99ms = s.t.pickups()
	res.Verified, err = s.finish(ctx)
	return res, err
}

// produceElsewhere runs the producer: this binary with -produce n.
func produceElsewhere(ctx context.Context, cfg config, n int) error {
	args := []string{"-peer", cfg.peer, "-workload", cfg.workload, "-dir", cfg.dir,
		"-rate", strconv.Itoa(cfg.rate), "-produce", strconv.Itoa(n)}
	if cfg.redisAddr != "" {
		args = append(args, "-redis", cfg.redisAddr)
	}
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Stderr = os.Stderr
	if out, err := cmd.Output(); err != nil {
		return fmt.Errorf("producer: %w (%s)", err, out)
	}
	return nil
}

// produce is the producer process: it opens the peer on the store the
// workers' process made, and enqueues n stamped jobs at cfg.rate a second.
func produce(ctx context.Context, open opener, cfg config, n int) error {
	stampPayloads = true
	cfg.producer = true
	sys, err := open(ctx, cfg, newTracker(0, 1))
	if err != nil {
		return err
	}
	err = pace(n, cfg.rate, func(seq int) error { return sys.enqueue(ctx, seq) })
	return errors.Join(err, sys.close())
}
