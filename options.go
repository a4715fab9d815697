package litequeue

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// Defaults for the zero fields of [Options].
const (
	DefaultVisibilityTimeout = 30 * time.Second
	DefaultDeadTTL           = 14 * 24 * time.Hour
	DefaultKeepFinished      = 24 * time.Hour
	DefaultMaxPayload        = 1 << 20 // bytes
	DefaultMaxOutput         = 1 << 20 // bytes
)

// Options configure a [Queue]. The zero Options is valid: every field's
// zero value selects the default named beside it. [Open] copies the
// Options; later changes to the caller's value, or to its
// [Options.Policies] and [Options.Kinds] maps, have no effect.
type Options struct {
	// Clock supplies every timestamp the queue stores or compares, and every
	// timer it waits on. nil: the real clock. Tests pass [clock.NewMock]().
	Clock clock.Clock

	// Rand returns uniform draws in [0,1) for jitter. The [Queue] serialises
	// its calls, so it need not be safe for concurrent use.
	// nil: a PRNG seeded from the operating system.
	Rand func() float64

	// Retry is the default policy, used by every handler without [UsePolicy].
	// Its zero fields take [DefaultPolicy]'s values.
	Retry Policy

	// Policies are named policies, chosen per handler with [UsePolicy](name).
	// A zero field inherits the value of [Options.Retry] after Retry's own
	// defaults are filled in. nil: none.
	Policies map[string]Policy

	// VisibilityTimeout is the lease a worker takes on a job it claims. The
	// lease is renewed while the handler runs; a job whose lease ran out
	// (its worker died) comes back as a failed attempt. 0: 30s.
	VisibilityTimeout time.Duration

	// DeadTTL is how long a dead job is kept for inspection and replay
	// before it is purged. 0: 14 days; [KeepForever]: for good.
	DeadTTL time.Duration

	// KeepFinished is how long completed, discarded, cancelled and expired
	// jobs are kept before they are purged. 0: 24h; [KeepForever]: for good.
	KeepFinished time.Duration

	// Retention holds rules that keep the finished jobs of some queues or
	// kinds for other times than [Options.KeepFinished] and [Options.DeadTTL]
	// (see [Retention]). [Open] refuses a rule that names neither a queue nor
	// a kind, or sets neither time, two rules for the same queue and kind, and
	// a negative time other than [KeepForever]. nil: none.
	Retention []Retention

	// Kinds holds the flow control of kinds by name — limits, expiry and
	// breaker (see [KindOptions]) — that [Queue.Handle] starts each
	// kind's handler from, before its own HandlerOptions, which win field
	// by field. [Open] refuses a kind that is not a name (see [NameLimit])
	// and a field out of the limits its [HandlerOption] has, with an error
	// that names the kind and wraps a *[FieldError]. nil: none.
	Kinds map[string]KindOptions

	// RefuseUnknownKinds makes [Queue.Enqueue], [Queue.EnqueueTx],
	// [Queue.EnqueueMany], [Queue.Periodic] and the same methods of a
	// [Kind] refuse, writing nothing, a kind that no handler knows: one
	// with no handler on this Queue that no [Queue.Work] or [Queue.RunDue]
	// of any process on the database has had a handler for. The error
	// names the kind and wraps [ErrUnknownKind]. So a typo in a kind, or a
	// kind whose workers were never deployed, fails at the enqueue rather
	// than waiting forever, also in a process that only enqueues, once a
	// worker has run on the database. Each Work and RunDue records its
	// kinds at its start, when [Queue.Handle] adds one, and at most once an
	// hour after that; a kind once handled stays known. An enqueue of a
	// known kind reads nothing; one of an unknown kind reads the recorded
	// kinds again, so it is accepted as soon as a worker has recorded it.
	// [Queue.Replay], [Queue.RunNow] and the slots of a registered
	// [Queue.Periodic] make no new kind and are not checked.
	//
	// false: such a kind is enqueued, and its first enqueue on the Queue
	// logs a warning naming it to [Options.Logger].
	RefuseUnknownKinds bool

	// Synchronous is SQLite's synchronous setting: "full" makes every
	// acknowledged write survive a power loss; "normal" survives a crash of
	// the process but may lose the last commits on power loss, for speed.
	// "": "full".
	Synchronous string

	// Checkpoint says who copies the WAL back into the database file.
	// "auto": SQLite, after each commit that leaves the -wal past 1000
	// pages, and litequeue, after the janitor's vacuum; alone on the file,
	// the -wal stays near 4 MiB. "off": neither, for a file that an
	// external replicator such as Litestream watches and checkpoints on
	// its own schedule. Litestream keeps a read transaction open, so only
	// its own checkpoints start the -wal again: under it, with "auto",
	// each commit past 1000 pages runs a checkpoint that copies back only
	// what Litestream has read, work that "off" leaves to Litestream
	// alone; either way the -wal is as large as Litestream lets it grow
	// (the README's "Backups and replicas" has figures). With "off" and no
	// replicator, the -wal grows with every commit until the last
	// connection to the file closes, which checkpoints it. "": "auto".
	Checkpoint string

	// Logger receives the queue's logs (rescued leases, a panicking
	// [Options.OnEvent], retention). nil: no logs.
	Logger *slog.Logger

	// OnEvent, if not nil, is called after each state change commits and
	// before the call that caused it returns, one call at a time. [Event.Type]
	// is one of "job.enqueued", "job.started", "job.completed", "job.retry",
	// "job.snoozed", "job.dead", "job.discarded", "job.cancelled",
	// "job.replayed", "job.run_now", "job.deleted", "job.expired". A panic
	// in OnEvent is recovered and logged.
	// A kind with a [Breaker] also fires "job.breaker_opened" and
	// "job.breaker_closed".
	//
	// OnEvent must not call the [Queue]'s methods that fire events
	// ([Queue.Enqueue], [Queue.EnqueueMany], [Queue.Cancel], [Queue.Replay],
	// [Queue.ReplayDead], [Queue.RunNow], [Queue.Delete], [Queue.RunDue]) or
	// [Queue.Close]: such a call waits for the OnEvent call in progress to
	// return, which waits for it. Reads ([Queue.Get], [Queue.List],
	// [Queue.History], [Queue.Stats], [Queue.Seen]) are fine. To enqueue a
	// follow-up job on an event, call Enqueue from another goroutine, or from
	// the handler. A call that has waited 10 seconds for OnEvent is logged as
	// a warning.
	OnEvent func(Event)

	// MaxPayload is the largest payload, in bytes, [Queue.Enqueue] accepts.
	// 0: 1 MiB.
	MaxPayload int

	// MaxOutput is the largest output, in bytes, [RecordOutput] accepts.
	// 0: 1 MiB ([DefaultMaxOutput]).
	MaxOutput int

	// EnqueueMiddleware wraps the making of every job, outside the
	// middleware of [Queue.UseEnqueue] and in the order given, the first
	// outermost (see UseEnqueue). [Open] refuses a nil middleware. nil:
	// none.
	EnqueueMiddleware []func(Enqueuer) Enqueuer

	// MaxClockSkew bounds, on a PostgreSQL server, how far Clock may read
	// from the server's clock: past it, the Queue claims, rescues and
	// purges nothing, and returns or logs a *[ClockSkewError] (see "On a
	// PostgreSQL server" in the package doc). 0: VisibilityTimeout/4 (7.5s
	// by default) for a clock that runs by itself, such as the real one,
	// and no check for a clock that a test steps (one with an Add method,
	// as [clock.Mock] has), which need only agree with the test's other
	// Queues; negative: no check. [Open] refuses a bound over
	// VisibilityTimeout/3, which leases could not absorb. A file has no
	// server, and ignores it.
	MaxClockSkew time.Duration

	// SealKeys, if set, seal every payload at rest with AES-256-GCM: each
	// payload enqueued is stored sealed with the first key, naming its ID,
	// and opens with whichever key of the list has the ID it names, so
	// that keys rotate: put a new key first and keep the old ones after it
	// until no job sealed with them is left. [Queue.Enqueue] returns, and
	// [Queue.Get], [Queue.List] and the handler get, the payload opened; a
	// payload that does not open (no key of its ID, the wrong key, bytes
	// changed in the file) is never handed to a handler: its run fails at
	// once, for good, with the ErrorClass "sealed", and Get returns it as
	// stored (see [Job.Sealed]). The kind, the queue, the metadata, the
	// unique key, the errors and the history are not sealed, and an
	// [Event]'s Job carries the payload as stored. [Copy] and
	// backups copy sealed payloads as they are. A sealed payload is at most
	// 98 bytes longer than the [Options.MaxPayload] that bounds it before.
	// A key seals safely some four billion payloads: rotate it long
	// before. [Open] refuses a key that is not [SealKeySize] bytes and an
	// ID that is empty, longer than [SealKeyIDLimit], of other characters
	// than [SealKey].ID allows, or given twice. A payload is taken as
	// sealed when it begins with the bytes 0xFF 'L' 'Q' 'S', which no JSON
	// or UTF-8 text begins with; one stored before the keys were set is
	// read as stored. nil: payloads are stored as given, and read as
	// stored, except that a sealed one is still never handed to a handler.
	SealKeys []SealKey
}

// resolve returns a copy of o with every zero field filled in and every
// field validated, or an error naming the policy, if any, and the problem.
func (o Options) resolve() (Options, error) {
	if _, ok := o.Policies[""]; ok {
		return o, errors.New(`retry policy "": a named policy needs a name (UsePolicy("") is the default policy)`)
	}
	if errs := o.resolvePolicies(); len(errs) > 0 {
		return o, policyError(errs[0])
	}
	o.fillQueue()
	if err := o.checkQueue(); err != nil {
		return o, err
	}
	rules, err := o.resolveRetention()
	if err != nil {
		return o, err
	}
	o.Retention = rules
	if _, ok := o.Kinds[""]; ok {
		return o, errors.New(`kinds."": a kind needs a name (Handle refuses an empty kind)`)
	}
	if errs := o.resolveKinds(); len(errs) > 0 {
		return o, errs[0]
	}
	if err := checkEnqueueMiddleware("EnqueueMiddleware", o.EnqueueMiddleware); err != nil {
		return o, err
	}
	o.EnqueueMiddleware = slices.Clip(slices.Clone(o.EnqueueMiddleware))
	if o.SealKeys, err = checkSealKeys(o.SealKeys); err != nil {
		return o, err
	}
	if o.Clock == nil {
		o.Clock = clock.New()
	}
	if o.Rand == nil {
		o.Rand = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())).Float64
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// resolvePolicies fills the zero fields of o.Retry from DefaultPolicy, and
// those of each named policy from the filled o.Retry into a new
// o.Policies, and validates each. It returns the problem of o.Retry alone
// if it has one (the named policies inherit from it), else those of the
// named policies, by name, with their Policy set.
func (o *Options) resolvePolicies() []*FieldError {
	o.Retry = o.Retry.withDefaults(DefaultPolicy())
	if err := o.Retry.check(); err != nil {
		return []*FieldError{err}
	}
	var errs []*FieldError
	policies := make(map[string]Policy, len(o.Policies))
	for _, name := range slices.Sorted(maps.Keys(o.Policies)) {
		p := o.Policies[name].withDefaults(o.Retry)
		if err := p.check(); err != nil {
			err.Policy = name
			errs = append(errs, err)
		}
		policies[name] = p
	}
	o.Policies = policies
	return errs
}

// policyError says which policy of Options err is about.
func policyError(err *FieldError) error {
	if err.Policy == "" {
		return fmt.Errorf("retry policy: %w", err)
	}
	return fmt.Errorf("retry policy %q: %w", err.Policy, err)
}

// fillQueue fills the zero fields of o that are not about retries, but
// for Clock, Rand and Logger.
func (o *Options) fillQueue() {
	if o.VisibilityTimeout == 0 {
		o.VisibilityTimeout = DefaultVisibilityTimeout
	}
	if o.DeadTTL == 0 {
		o.DeadTTL = DefaultDeadTTL
	}
	if o.KeepFinished == 0 {
		o.KeepFinished = DefaultKeepFinished
	}
	if o.MaxPayload == 0 {
		o.MaxPayload = DefaultMaxPayload
	}
	if o.MaxOutput == 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.Synchronous == "" {
		o.Synchronous = "full"
	}
	if o.Checkpoint == "" {
		o.Checkpoint = "auto"
	}
}

// checkQueue validates the fields fillQueue fills.
func (o *Options) checkQueue() *FieldError {
	switch {
	case o.VisibilityTimeout < time.Millisecond:
		return &FieldError{Field: "visibility_timeout", Value: o.VisibilityTimeout, Limit: time.Millisecond, kind: underMinimum}
	case checkTTL("dead_ttl", o.DeadTTL) != nil:
		return checkTTL("dead_ttl", o.DeadTTL)
	case checkTTL("keep_finished", o.KeepFinished) != nil:
		return checkTTL("keep_finished", o.KeepFinished)
	case o.MaxPayload < 0:
		return &FieldError{Field: "max_payload", Value: o.MaxPayload, Limit: 0, kind: isNegative}
	case o.MaxOutput < 0:
		return &FieldError{Field: "max_output", Value: o.MaxOutput, Limit: 0, kind: isNegative}
	case o.Synchronous != "full" && o.Synchronous != "normal":
		return &FieldError{Field: "synchronous", Value: o.Synchronous, Limit: []string{"full", "normal"}, kind: unknownName}
	case o.Checkpoint != "auto" && o.Checkpoint != "off":
		return &FieldError{Field: "checkpoint", Value: o.Checkpoint, Limit: []string{"auto", "off"}, kind: unknownName}
	case o.MaxClockSkew > o.VisibilityTimeout/3:
		return &FieldError{Field: "max_clock_skew", Value: o.MaxClockSkew, Limit: o.VisibilityTimeout / 3, kind: overLimit}
	}
	return nil
}

// draws serialises the calls to Options.Rand, which need not be safe for
// concurrent use.
type draws struct {
	mu   sync.Mutex
	rand func() float64
}

// draw returns one uniform draw in [0,1).
func (d *draws) draw() float64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.rand()
}

// policy returns the named policy of the resolved options, or Retry for
// "".
func (o *Options) policy(name string) (Policy, error) {
	if name == "" {
		return o.Retry, nil
	}
	p, ok := o.Policies[name]
	if !ok {
		return Policy{}, fmt.Errorf("unknown policy %q (Options.Policies has %v)", name, slices.Sorted(maps.Keys(o.Policies)))
	}
	return p, nil
}

// resolveKinds replaces o.Kinds with a copy whose Breakers are copies
// with their zero fields filled in, and returns the problems of its
// kinds, sorted by name.
func (o *Options) resolveKinds() []*kindError {
	if len(o.Kinds) == 0 {
		o.Kinds = nil
		return nil
	}
	var errs []*kindError
	kinds := make(map[string]KindOptions, len(o.Kinds))
	for _, kind := range slices.Sorted(maps.Keys(o.Kinds)) {
		if err := checkName("kind", kind); err != nil {
			errs = append(errs, &kindError{Kind: kind, Err: err})
			continue
		}
		k, err := o.Kinds[kind].resolve()
		if err != nil {
			err.Kind = kind
			errs = append(errs, err)
		}
		kinds[kind] = k
	}
	o.Kinds = kinds
	return errs
}

// resolveRetention validates the rules of o.Retention and returns a copy
// in which their zero fields hold o's values (filled in already).
func (o *Options) resolveRetention() ([]Retention, error) {
	if len(o.Retention) == 0 {
		return nil, nil
	}
	rules := make([]Retention, len(o.Retention))
	seen := make(map[[2]string]int, len(o.Retention))
	for i, r := range o.Retention {
		fail := func(field string, err error) ([]Retention, error) {
			return nil, &ruleError{Index: i, Field: field, Err: err}
		}
		switch j, dup := seen[[2]string{r.Queue, r.Kind}]; {
		case r.Queue == "" && r.Kind == "":
			return fail("", fmt.Errorf("names neither a queue nor a kind (Options.KeepFinished and DeadTTL are the rule for every job)"))
		case dup:
			return fail("", fmt.Errorf("%s, as rule %d does", r.names(), j))
		case r.KeepFinished == 0 && r.DeadTTL == 0:
			return fail("", fmt.Errorf("%s sets neither KeepFinished nor DeadTTL", r.names()))
		}
		seen[[2]string{r.Queue, r.Kind}] = i
		if err := checkTTL("keep_finished", r.KeepFinished); err != nil {
			return fail(err.Field, err)
		}
		if err := checkTTL("dead_ttl", r.DeadTTL); err != nil {
			return fail(err.Field, err)
		}
		if r.KeepFinished == 0 {
			r.KeepFinished = o.KeepFinished
		}
		if r.DeadTTL == 0 {
			r.DeadTTL = o.DeadTTL
		}
		rules[i] = r
	}
	return rules, nil
}
