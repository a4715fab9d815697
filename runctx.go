package litequeue

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue/internal/store"
)

// What a handler's context carries of its run, for the package's
// functions that a handler calls with it (RecordOutput): one value per
// run, under one unexported key.

// runKey is the context key of a run's runValue.
type runKey struct{}

// A runValue is a run as a handler's calls see it: its job, the lease
// that fences every write of the run, and what the run keeps for its end. It is safe for concurrent use by the handler's goroutines and
// the runner.
type runValue struct {
	claimed   *store.JobRow // the job's row as claimed: its token and created_at fence the run's writes
	maxOutput int           // Options.MaxOutput
	seal      *sealer       // seals the output as payloads are sealed
	st        *storage      // writes the checkpoints

	clock clock.Clock // times the progress reports

	mu       sync.Mutex
	output   []byte       // the output as stored, sealed if the Queue seals; nil: none recorded
	progress *JobProgress // the latest progress not yet written; nil: none
	wrote    time.Time    // when a progress was last written; zero: never
	flushMu  sync.Mutex   // held by a write of the progress
}

// newRunValue returns the runValue of the lease l's run, for a runner.
func (rn *runner) newRunValue(l *lease) *runValue {
	return &runValue{claimed: &l.row, maxOutput: rn.maxOutput, seal: rn.seal, st: rn.st, clock: rn.clock}
}

// withRun returns ctx carrying the run v.
func withRun(ctx context.Context, v *runValue) context.Context {
	return context.WithValue(ctx, runKey{}, v)
}

// runOf returns the run that ctx carries; the error, for the function
// what, says that ctx is not a handler's.
func runOf(ctx context.Context, what string) (*runValue, error) {
	if v, ok := ctx.Value(runKey{}).(*runValue); ok {
		return v, nil
	}
	return nil, fmt.Errorf("litequeue: %s: the context is not a handler's (call it with the ctx a handler is given, during its run)", what)
}
