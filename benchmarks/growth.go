package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// The growth workloads, growth10k and growth1m: a store holding many
// waiting jobs (10,000 or 1,000,000), filled in batches of 1,000 before the
// clock starts, then a fixed number of them (-drain, 10,000 by default)
// drained with 16 workers. The two drain rates show what the backlog costs
// each claim; the peak RSS, whether memory follows the backlog; and the
// store's bytes on disk, measured between the fill and the drain, what one
// waiting job costs on disk. The jobs left waiting stay in the store.

// defaultGrowthDrain is how many of the waiting jobs a growth run drains.
const defaultGrowthDrain = 10000

func runGrowth(ctx context.Context, open opener, cfg config) (result, error) {
	var res result
	if cfg.peer != "litequeue" {
		return res, fmt.Errorf("%w: %s runs for litequeue only (its growth targets)", errUnsupported, cfg.workload)
	}
	n, drain := cfg.jobs, min(cfg.drain, cfg.jobs)
	t := newPartialTracker(n, drain)
	sys, err := open(ctx, cfg, t)
	if err != nil {
		return res, err
	}
	s := &session{sys: sys, t: t}
	if err := s.fill(ctx, n); err != nil {
		s.abort()
		return res, err
	}
	disk, err := diskBytes(cfg.path)
	if err != nil {
		s.abort()
		return res, err
	}
	res.Waiting = n
	res.DiskBytes = disk
	res.DiskPerJob = round(float64(disk)/float64(n), 1)

	if err := s.timedDrain(ctx, cfg, &res, drain); err != nil {
		return res, err
	}
	res.Verified, err = s.finishPartial(ctx, &res)
	return res, err
}

// finishPartial stops the workers once the jobs waited for have run, and
// checks what a partial drain leaves: no job ran twice, and the store holds
// as unfinished exactly the jobs that did not run. It records the peak RSS
// first, before the check reads the store.
func (s *session) finishPartial(ctx context.Context, res *result) (string, error) {
	stopErr := s.sys.stop()
	_, res.MaxRSSMB = rusage()
	res.MaxRSSMB = round(res.MaxRSSMB, 1)
	var left int
	var leftErr error
	if stopErr == nil {
		left, leftErr = s.sys.unfinished(context.WithoutCancel(ctx))
	}
	closeErr := s.sys.close()
	if err := errors.Join(stopErr, leftErr, closeErr); err != nil {
		return "", err
	}
	ran, err := s.t.checkPartial()
	if err != nil {
		return "", err
	}
	if want := s.t.n - ran; left != want {
		return "", fmt.Errorf("the store holds %d unfinished jobs, want %d (%d waiting, %d ran)", left, want, s.t.n, ran)
	}
	return fmt.Sprintf("%d of %d waiting jobs ran, exactly once each; store: %d unfinished (the ones that did not run)", ran, s.t.n, left), nil
}

// checkPartial returns how many jobs ran, or an error if one ran more than
// once or fewer ran than were waited for.
func (t *tracker) checkPartial() (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var twice []int
	for seq, c := range t.ran {
		if c > 1 {
			twice = append(twice, seq)
		}
	}
	if len(twice) > 0 {
		return 0, fmt.Errorf("%d jobs ran more than once, e.g. job %d", len(twice), twice[0])
	}
	if left := t.remaining.Load(); left > 0 {
		return 0, fmt.Errorf("%d of the jobs waited for did not run", left)
	}
	return len(t.ran), nil
}

// diskBytes returns the size of the SQLite file at path with its -wal and
// -shm files (a missing one counts 0).
func diskBytes(path string) (int64, error) {
	var total int64
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("disk bytes: %w", err)
		}
		total += fi.Size()
	}
	return total, nil
}
