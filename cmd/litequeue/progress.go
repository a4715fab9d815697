package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/litequeue/litequeue"
)

// progressLine draws on a terminal a line of how far a long act has got
// (see fmtProgress), redrawn in place at most ten times a second, and
// wipes it at the end. An act on at most progressMin jobs, one
// transaction's worth, is over too soon to show one. Its times are the
// wall clock's: it tells a person how long to wait.
type progressLine struct {
	w     io.Writer
	did   string // "copied", "replayed"
	start time.Time
	mu    sync.Mutex
	last  time.Time // of the last drawing; zero: none yet
}

// progressMin is the most jobs of an act that shows no progress.
const progressMin = 500

// showProgress returns ctx with a progress line on stderr for the act that
// does did (see litequeue.WithProgress), and the func that wipes it at the
// end; without a terminal on stderr, or with --json, ctx as it is.
func (c *cli) showProgress(ctx context.Context, did string, asJSON bool) (context.Context, func()) {
	if !c.stderrTTY || asJSON {
		return ctx, func() {}
	}
	p := &progressLine{w: c.stderr, did: did, start: time.Now()}
	return litequeue.WithProgress(ctx, p.draw), p.wipe
}

// draw draws the line for done of total jobs, unless it was drawn less
// than a tenth of a second ago and the act is not done.
func (p *progressLine) draw(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if total <= progressMin {
		return
	}
	if !p.last.IsZero() && now.Sub(p.last) < 100*time.Millisecond && done < total {
		return
	}
	p.last = now
	fmt.Fprintf(p.w, "\r\x1b[K%s", fmtProgress(p.did, done, total, now.Sub(p.start)))
}

// wipe clears the line, if it was drawn.
func (p *progressLine) wipe() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.last.IsZero() {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

// fmtProgress says how far an act has got after elapsed: "replayed
// 1500/6000 jobs (25%) · 3000 jobs/s · 2s left".
func fmtProgress(did string, done, total int, elapsed time.Duration) string {
	s := fmt.Sprintf("%s %d/%d jobs", did, done, total)
	if total > 0 {
		s += fmt.Sprintf(" (%d%%)", done*100/total)
	}
	if done == 0 || elapsed <= 0 {
		return s
	}
	rate := float64(done) / elapsed.Seconds()
	s += fmt.Sprintf(" · %.0f jobs/s", rate)
	if left := total - done; left > 0 {
		s += " · " + fmtAge(time.Duration(float64(left)/rate*float64(time.Second))) + " left"
	}
	return s
}
