package litequeue

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// DefaultQueue is the queue a job goes to without [OnQueue].
const DefaultQueue = "default"

// EnqueueOption sets one property of the jobs a [Queue.Enqueue] call adds.
type EnqueueOption func(*enqueueConfig)

type enqueueConfig struct {
	queue       string
	delay       time.Duration
	at          time.Time // used when atSet; else now + delay
	atSet       bool
	priority    int
	uniqueKey   string
	maxTries    int // used when maxTriesSet; else the handler's policy
	maxTriesSet bool
	metadata    store.Metadata
	expireAfter time.Duration // used when expireSet; else the handler's WithExpiry, if any
	expireSet   bool
	deps        []dependency   // DependsOn, DependsOnRule
	depRule     DependencyRule // IfDependencyFails; "": CancelIfFailed
}

// OnQueue puts the job on the named queue. Default: "default".
func OnQueue(name string) EnqueueOption {
	return func(c *enqueueConfig) { c.queue = name }
}

// Delay makes the job due d after it is enqueued. Delay and [At]: the last
// one given wins. A negative d is refused, and so is a d that makes the
// job due after the latest time At takes.
func Delay(d time.Duration) EnqueueOption {
	return func(c *enqueueConfig) { c.delay, c.atSet = d, false }
}

// At makes the job due at t; a t in the past makes it due at once. [Delay]
// and At: the last one given wins. The zero [time.Time] is refused: it is
// an unset time far more often than a wish to run at once. So is a t that
// Unix milliseconds in an int64 cannot hold, the form [Job.RunAt] is stored
// in: before -292275055-05-16T16:47:04.192Z or after
// 292278994-08-17T07:12:55.807Z (t is truncated to whole milliseconds).
func At(t time.Time) EnqueueOption {
	return func(c *enqueueConfig) { c.at, c.atSet, c.delay = t, true, 0 }
}

// The earliest and latest RunAt: what Unix milliseconds in an int64 hold,
// and time.UnixMilli gives back.
var (
	earliestRunAt = time.UnixMilli(math.MinInt64)
	latestRunAt   = time.UnixMilli(math.MaxInt64)
)

// storable reports whether a job can be due at t: whether t, truncated to
// whole milliseconds, lies between earliestRunAt and latestRunAt.
func storable(t time.Time) bool {
	return !t.Before(earliestRunAt) && t.Before(latestRunAt.Add(time.Millisecond))
}

// runAtLimits names the range of storable times, for errors.
func runAtLimits() string {
	return fmt.Sprintf("the Unix milliseconds an int64 holds, %s … %s",
		earliestRunAt.UTC().Format(time.RFC3339Nano), latestRunAt.UTC().Format(time.RFC3339Nano))
}

// Priority orders due jobs: higher runs first. Default 0.
func Priority(p int) EnqueueOption {
	return func(c *enqueueConfig) { c.priority = p }
}

// UniqueKey gives the job a key: while a job with that key is pending or
// running, enqueueing the same key again inserts nothing and returns that
// job with [Job.Duplicate] set. [Queue.EnqueueMany] refuses it: one key
// cannot name many jobs.
func UniqueKey(key string) EnqueueOption {
	return func(c *enqueueConfig) { c.uniqueKey = key }
}

// MaxTries overrides the policy's MaxTries for this job, 1…50;
// [Queue.Enqueue] refuses any other n, 0 too.
func MaxTries(n int) EnqueueOption {
	return func(c *enqueueConfig) { c.maxTries, c.maxTriesSet = n, true }
}

// enqueueBatch is a checked Enqueue call, ready to insert.
type enqueueBatch struct {
	kind     string
	payloads [][]byte
	cfg      enqueueConfig
	metadata []store.Metadata // by job, as the enqueue middleware left it; nil: cfg.metadata for each
	maxTries int              // effective at enqueue; rewritten at claim unless own
	eng      store.Engine     // inserts many rows at once
	seal     *sealer          // seals the payloads as stored (see stored)
	sealed   [][]byte         // the payloads as stored, once stored ran
	deps     []store.Dep      // the jobs each of the batch's depends on, sorted
}

// An enqueuer makes the batches of jobs that Enqueue, EnqueueTx,
// EnqueueMany and the periodic schedules insert, from the handlers and
// options of their Queue.
type enqueuer struct {
	reg  *registry
	opts *Options // resolved
	eng  store.Engine
	mw   *enqueueMiddleware
	seal *sealer // seals the payloads where they go to the store
}

// batch checks the call's arguments and encodes its payloads.
func (e *enqueuer) batch(kind string, payloads []any, opts []EnqueueOption) (*enqueueBatch, error) {
	cfg := enqueueConfig{queue: DefaultQueue}
	for _, o := range opts {
		o(&cfg)
	}
	if kind == "" {
		return nil, errors.New("litequeue: enqueue: empty kind")
	}
	if err := checkName("kind", kind); err != nil {
		return nil, fmt.Errorf("litequeue: enqueue: %w", err)
	}
	h := e.reg.get(kind)
	if d := e.expiry(kind); d > 0 && !cfg.expireSet {
		cfg.expireAfter = d
	}
	fail := func(format string, args ...any) (*enqueueBatch, error) {
		return nil, fmt.Errorf("litequeue: enqueue %s: "+format, append([]any{kind}, args...)...)
	}
	if err := cfg.check(); err != nil {
		return fail("%w", err)
	}
	if err := checkMetadata(cfg.metadata); err != nil {
		return fail("%w", err)
	}
	deps, err := cfg.storedDeps()
	if err != nil {
		return fail("%w", err)
	}
	b := &enqueueBatch{kind: kind, cfg: cfg, payloads: make([][]byte, len(payloads)), eng: e.eng, seal: e.seal, deps: deps}
	for i, p := range payloads {
		data, err := encodePayload(p)
		if err != nil {
			return fail("encode payload: %w", err)
		}
		if len(data) > e.opts.MaxPayload {
			return fail("payload of %d bytes is over the limit of %d bytes", len(data), e.opts.MaxPayload)
		}
		b.payloads[i] = data
	}
	b.maxTries = cfg.maxTries
	if b.maxTries == 0 {
		b.maxTries = e.opts.Retry.MaxTries
		if h != nil {
			b.maxTries = h.policy.MaxTries
		}
	}
	return b, nil
}

// admitted checks the enqueue of one job of kind with payload and opts —
// its arguments (batch), its kind with checkKind (the Queue's
// handledKinds.enqueueCheck), the enqueue middleware (admit) — and
// returns its batch, ready to insert.
func (e *enqueuer) admitted(ctx context.Context, checkKind func(context.Context, string) error, kind string, payload any, opts []EnqueueOption) (*enqueueBatch, error) {
	b, err := e.batch(kind, []any{payload}, opts)
	if err == nil {
		err = checkKind(ctx, kind)
	}
	if err == nil {
		err = e.admit(ctx, b)
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

// expiry returns the expiry that the Queue gives the jobs of kind
// enqueued without their own: that of its handler, or, without one, that
// of Options.Kinds.
func (e *enqueuer) expiry(kind string) time.Duration {
	if h := e.reg.get(kind); h != nil {
		return h.expiry
	}
	return e.opts.Kinds[kind].ExpireAfter
}

// check refuses the options that cannot be meant, naming the value and
// the limit.
func (c *enqueueConfig) check() error {
	if c.queue == "" {
		return errors.New("empty queue name")
	}
	if err := checkName("queue", c.queue); err != nil {
		return err
	}
	switch {
	case !c.atSet && c.delay < 0:
		return fmt.Errorf("negative delay %v", c.delay)
	case c.atSet && c.at.IsZero():
		return errors.New("At the zero time.Time (unset?)")
	case c.atSet && !storable(c.at):
		return fmt.Errorf("At %s is outside %s", c.at.Format(time.RFC3339Nano), runAtLimits())
	case c.maxTriesSet && (c.maxTries < 1 || c.maxTries > MaxTriesLimit):
		return fmt.Errorf("max_tries %d is outside 1…%d", c.maxTries, MaxTriesLimit)
	case c.expireSet && c.expireAfter <= 0:
		return fmt.Errorf("ExpireAfter %v must be positive", c.expireAfter)
	}
	return nil
}

// encodePayload returns the stored form of a payload.
func encodePayload(p any) ([]byte, error) {
	switch v := p.(type) {
	case []byte:
		return v, nil
	case json.RawMessage:
		return v, nil
	}
	return json.Marshal(p)
}

// insert adds the batch's jobs in tx at time now. With a UniqueKey held by
// a live job, it inserts nothing and returns that job marked Duplicate.
func (b *enqueueBatch) insert(ctx context.Context, tx store.Execer, now time.Time) ([]*Job, error) {
	for range uniqueTries {
		if key := b.cfg.uniqueKey; key != "" {
			row, err := store.LiveByKey(ctx, tx, key)
			if err != nil {
				return nil, err
			}
			if row != nil {
				j := b.seal.view(row)
				j.Duplicate = true
				return []*Job{j}, nil
			}
		}
		runAt, err := b.runAt(now)
		if err != nil {
			return nil, err
		}
		ids, err := b.insertRows(ctx, tx, runAt, now)
		if err != nil {
			return nil, err
		}
		if len(ids) > 0 {
			jobs := b.jobs(ids, runAt, now)
			return jobs, b.depend(ctx, tx, jobs, now)
		}
	}
	return nil, fmt.Errorf("unique key %q: the live job holding it kept changing", b.cfg.uniqueKey)
}

// uniqueTries bounds how often insert looks for the live job holding its
// unique key. In a file the look and the insert are one step, as writers
// take turns; on a server another process may insert the key between the
// two, or end its job, and insert, which then inserts nothing, looks again.
const uniqueTries = 3

// runAt returns when the batch's jobs are due, if enqueued at now, having
// checked that their expiry, if any, can be stored too.
func (b *enqueueBatch) runAt(now time.Time) (time.Time, error) {
	runAt := b.cfg.at
	if !b.cfg.atSet {
		runAt = now.Add(b.cfg.delay)
		if !storable(runAt) {
			return time.Time{}, fmt.Errorf("delay %v makes the job due at %s, outside %s",
				b.cfg.delay, runAt.UTC().Format(time.RFC3339Nano), runAtLimits())
		}
	}
	if d := b.cfg.expireAfter; d > 0 && d > latestRunAt.Sub(store.FromMS(store.MS(runAt))) {
		return time.Time{}, fmt.Errorf("ExpireAfter %v makes the job expire after %s, outside %s",
			d, latestRunAt.UTC().Format(time.RFC3339Nano), runAtLimits())
	}
	return runAt, nil
}

// insertRows inserts the batch's jobs, due at runAt, made at now, and
// returns their IDs: none if its unique key is held. The jobs of one
// metadata, each run of them in the batch's order, are one insert.
func (b *enqueueBatch) insertRows(ctx context.Context, tx store.Execer, runAt, now time.Time) ([]int64, error) {
	var ids []int64
	for i := 0; i < len(b.payloads); {
		n := 1
		if b.metadata == nil { // one metadata for all
			n = len(b.payloads)
		}
		for i+n < len(b.payloads) && maps.Equal(b.meta(i+n), b.meta(i)) {
			n++
		}
		got, err := b.eng.InsertJobs(ctx, tx, b.rows(i, n, runAt, now))
		if err != nil || len(got) == 0 {
			return nil, err
		}
		ids, i = append(ids, got...), i+n
	}
	return ids, nil
}

// meta is the metadata of the batch's job i.
func (b *enqueueBatch) meta(i int) store.Metadata {
	if b.metadata == nil {
		return b.cfg.metadata
	}
	return b.metadata[i]
}

// rows are the n jobs of the batch from job i as inserted, due at runAt,
// made at now: one metadata.
func (b *enqueueBatch) rows(i, n int, runAt, now time.Time) *store.NewJobs {
	return &store.NewJobs{
		Queue: b.cfg.queue, Kind: b.kind, Payloads: b.stored()[i : i+n], Priority: b.cfg.priority,
		MaxTries: b.maxTries, OwnMaxTries: b.cfg.maxTries, RunAt: store.MS(runAt), CreatedAt: store.MS(now),
		UniqueKey: b.cfg.uniqueKey, Metadata: b.meta(i), ExpiresAt: b.expiresAt(runAt),
	}
}

// stored returns the batch's payloads as stored: sealed with the
// Queue's first key, if it has keys. It seals them once, however often
// the insert is tried.
func (b *enqueueBatch) stored() [][]byte {
	if b.seal == nil {
		return b.payloads
	}
	if b.sealed == nil {
		b.sealed = b.seal.seal(b.cfg.queue, b.kind, b.payloads)
	}
	return b.sealed
}

// sealedAs records in j, the batch's i-th job as inserted, with its
// payload as given, that its payload is stored sealed, and how.
func (b *enqueueBatch) sealedAs(j *Job, i int) {
	if b.seal != nil {
		j.opened = &openedJob{keyID: b.seal.keys[0].id, stored: b.sealed[i]}
	}
}

// expiresAt is the stored expiry of the batch's jobs, due at runAt: its
// ExpireAfter past their first RunAt, as stored; NULL for none.
func (b *enqueueBatch) expiresAt(runAt time.Time) sql.NullInt64 {
	if b.cfg.expireAfter <= 0 {
		return sql.NullInt64{}
	}
	return store.NullMS(store.FromMS(store.MS(runAt)).Add(b.cfg.expireAfter))
}

// jobs returns the batch's jobs as inserted with the given IDs, each its
// own allocation: a caller that keeps one job of a batch keeps only it.
func (b *enqueueBatch) jobs(ids []int64, runAt, now time.Time) []*Job {
	jobs := make([]*Job, len(b.payloads))
	for i, p := range b.payloads {
		if len(p) == 0 {
			p = nil // as Get reads an empty payload
		}
		jobs[i] = &Job{
			ID: ids[i], Queue: b.cfg.queue, Kind: b.kind, Payload: p, State: Pending,
			Priority: b.cfg.priority, MaxTries: b.maxTries,
			// As stored: whole milliseconds, so that Enqueue returns what Get does.
			RunAt: store.FromMS(store.MS(runAt)), CreatedAt: store.FromMS(store.MS(now)), UniqueKey: b.cfg.uniqueKey,
			Metadata: cloneMetadata(b.meta(i)), ExpiresAt: store.NullTime(b.expiresAt(runAt)),
		}
		b.sealedAs(jobs[i], i)
	}
	return jobs
}

// Metadata sets the key of the job's metadata to value: a small map of
// strings carried from the enqueue to every run of the job ([Job.Metadata])
// and kept with it in the file, for what travels beside the payload rather
// than in it (a trace context, a request ID, the user who asked). Given
// again for one key, the last value wins. [Queue.Enqueue] refuses an empty
// key, a key or value that is not valid UTF-8, more than
// [MetadataKeysLimit] keys and more than [MetadataSizeLimit] bytes.
func Metadata(key, value string) EnqueueOption {
	return func(c *enqueueConfig) {
		if c.metadata == nil {
			c.metadata = make(store.Metadata)
		}
		c.metadata[key] = value
	}
}

// ExpireAfter makes the job expire if it has not started within d of the
// moment it is first due (its [Job.RunAt] at enqueue: now, or as [Delay] or
// [At] set it; for a job that waits for its dependencies, see [DependsOn],
// the moment it becomes due once they completed). At that moment a pending job becomes [Expired], with a
// history row of outcome [OutcomeExpired] and the event job.expired; it is
// not retried and not dead-lettered. The same holds for every later start:
// a retry, a snooze, a [Queue.Replay] or a [Queue.RunNow] due at or after
// the expiry expires instead of running, as a job that is late is of no
// use. A run that started before the expiry is never cut short by it.
// ExpireAfter wins over the kind's [WithExpiry]. [Queue.Enqueue] refuses a
// d that is not positive, or that puts the expiry past the latest storable
// time (see At).
func ExpireAfter(d time.Duration) EnqueueOption {
	return func(c *enqueueConfig) { c.expireAfter, c.expireSet = d, true }
}
