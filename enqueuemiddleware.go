package litequeue

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// Enqueuer makes one job, as enqueue middleware sees the making: the
// enqueue-side twin of [Handler]. An enqueue middleware, a
// func(Enqueuer) Enqueuer, is given the next Enqueuer and returns one that
// runs in its place: it may add, change or delete job's metadata, replace
// its payload, pass on another ctx, and refuse the job by returning an
// error without calling next. See [Queue.UseEnqueue].
type Enqueuer func(ctx context.Context, job *NewJob) error

// NewJob is a job about to be made by [Queue.Enqueue], [Queue.EnqueueTx],
// [Queue.EnqueueMany] (one NewJob per payload) or a periodic slot, as
// enqueue middleware sees it: after its arguments were checked and its
// payload encoded, before anything is stored. Payload and Metadata are the
// job's to change; the rest is read-only, by methods. It has no ID yet:
// the job is inserted once every middleware has returned.
type NewJob struct {
	// Payload is the payload as it will be stored: the bytes [Queue.Enqueue]
	// encoded, or the []byte given. A middleware may replace it (to
	// compress or seal it, say); a handler is given the bytes the innermost
	// middleware passed on. The result is held to [Options.MaxPayload].
	Payload []byte

	// Metadata is the job's metadata, never nil: what [Metadata] and
	// [MetadataMap] set, or an empty map. A middleware may add, change and
	// delete keys; the result is held to the bounds that Metadata names.
	Metadata map[string]string

	kind, queue string
	runAt       time.Time
	priority    int
	uniqueKey   string
	maxTries    int
	expireAfter time.Duration
}

// Kind returns the job's kind.
func (j *NewJob) Kind() string { return j.kind }

// Queue returns the queue the job goes to.
func (j *NewJob) Queue() string { return j.queue }

// RunAt returns when the job is due: the time of [At], or the moment the
// middleware runs, on the Queue's clock, plus [Delay]. The stored
// [Job.RunAt] of a Delay is counted from the insert, a moment later.
func (j *NewJob) RunAt() time.Time { return j.runAt }

// Priority returns the job's [Priority].
func (j *NewJob) Priority() int { return j.priority }

// UniqueKey returns the job's [UniqueKey], "" for none.
func (j *NewJob) UniqueKey() string { return j.uniqueKey }

// MaxTries returns how many tries the job gets: its own [MaxTries], or its
// handler's policy's.
func (j *NewJob) MaxTries() int { return j.maxTries }

// ExpireAfter returns the job's expiry (see [ExpireAfter]), 0 for none.
func (j *NewJob) ExpireAfter() time.Duration { return j.expireAfter }

// errNotPassedOn is a middleware's nil that did not pass the job on.
var errNotPassedOn = errors.New("an enqueue middleware returned nil without passing the job on")

// enqueueMiddleware holds the middleware of a Queue's enqueues: those of
// Options.EnqueueMiddleware, then those of UseEnqueue, in order. It is
// safe for concurrent use; use only appends.
type enqueueMiddleware struct {
	mu sync.RWMutex
	mw []func(Enqueuer) Enqueuer
}

// use adds mw after the middleware held.
func (m *enqueueMiddleware) use(mw ...func(Enqueuer) Enqueuer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mw = append(m.mw, mw...)
}

// chain returns the middleware held composed around an end that hands
// back the job it was passed, or nil for none: run it once per job of a
// call.
func (m *enqueueMiddleware) chain() func(ctx context.Context, job *NewJob) (*NewJob, error) {
	m.mu.RLock()
	mw := m.mw
	m.mu.RUnlock()
	if len(mw) == 0 {
		return nil
	}
	return func(ctx context.Context, job *NewJob) (*NewJob, error) {
		var passed *NewJob
		end := Enqueuer(func(_ context.Context, j *NewJob) error {
			passed = j
			return nil
		})
		for i := len(mw) - 1; i >= 0; i-- {
			end = mw[i](end)
		}
		switch err := end(ctx, job); {
		case err != nil:
			return nil, err
		case passed == nil:
			return nil, errNotPassedOn
		}
		return passed, nil
	}
}

// checkEnqueueMiddleware returns an error naming the first nil middleware
// of mw, given to call.
func checkEnqueueMiddleware(call string, mw []func(Enqueuer) Enqueuer) error {
	for i, m := range mw {
		if m == nil {
			return fmt.Errorf("%s[%d] is a nil middleware", call, i)
		}
	}
	return nil
}

// admit passes each job of b through the enqueue middleware, if any,
// taking the payloads and metadata they pass on, and checks these again.
// It changes b only if every job is admitted.
func (e *enqueuer) admit(ctx context.Context, b *enqueueBatch) error {
	chain := e.mw.chain()
	if chain == nil || len(b.payloads) == 0 {
		return nil
	}
	payloads := make([][]byte, len(b.payloads))
	metadata := make([]store.Metadata, len(b.payloads))
	for i, p := range b.payloads {
		job, err := chain(ctx, b.newJob(p, e.opts.Clock.Now()))
		if err == nil {
			err = e.checkAdmitted(job)
		}
		if err != nil {
			return b.refused(i, err)
		}
		payloads[i], metadata[i] = job.Payload, job.Metadata
	}
	b.payloads, b.metadata = payloads, metadata
	return nil
}

// newJob is the job of b with payload p, as the middleware sees it at now.
func (b *enqueueBatch) newJob(p []byte, now time.Time) *NewJob {
	runAt := b.cfg.at
	if !b.cfg.atSet {
		runAt = now.Add(b.cfg.delay)
	}
	md := make(map[string]string, len(b.cfg.metadata))
	maps.Copy(md, b.cfg.metadata)
	return &NewJob{Payload: p, Metadata: md, kind: b.kind, queue: b.cfg.queue, runAt: runAt,
		priority: b.cfg.priority, uniqueKey: b.cfg.uniqueKey, maxTries: b.maxTries, expireAfter: b.cfg.expireAfter}
}

// checkAdmitted holds the payload and metadata a middleware passed on to
// the limits of Enqueue's own.
func (e *enqueuer) checkAdmitted(job *NewJob) error {
	if err := checkMetadata(job.Metadata); err != nil {
		return fmt.Errorf("as the enqueue middleware left it, %w", err)
	}
	if len(job.Payload) > e.opts.MaxPayload {
		return fmt.Errorf("as the enqueue middleware left it, payload of %d bytes is over the limit of %d bytes",
			len(job.Payload), e.opts.MaxPayload)
	}
	return nil
}

// refused is the error of b refused at its job i: the middleware's err,
// naming the job in a batch of many.
func (b *enqueueBatch) refused(i int, err error) error {
	if len(b.payloads) > 1 {
		return fmt.Errorf("litequeue: enqueue %s: payload %d of %d: %w", b.kind, i, len(b.payloads), err)
	}
	return fmt.Errorf("litequeue: enqueue %s: %w", b.kind, err)
}
