// Package litequeue is a job queue for Go programs that must not depend on a
// server: desktop apps, IoT and edge devices, single-binary services.
// Everything — jobs, the history of every attempt, idempotency keys and dead
// letters — lives in one SQLite file in WAL mode, through the pure-Go driver
// modernc.org/sqlite. A program that uses it needs no CGO and cross-compiles
// as is to linux/amd64, linux/arm64, linux/arm (v7), darwin/arm64 and
// windows/amd64.
//
// A job that fails is not finished: it goes back on the queue with a wait
// that grows each time, with jitter, until it succeeds or runs out of tries
// and lands among the dead letters, where a person can inspect it and replay
// it with the litequeue command.
//
// # Jobs and handlers
//
// [Open] creates the file and its schema if needed. [Queue.Handle] registers
// a [Handler] for a kind of job, [Queue.Enqueue] stores a job of that kind,
// and [Queue.Work] runs workers until its context is done; [Queue.RunDue]
// instead runs every job that is due now, from the caller's goroutine.
// [JSON] adapts a function of typed arguments into a Handler. With the
// default [Options.Synchronous], "full", an enqueue that returned survives a
// power loss. Kinds and queues ([OnQueue]) are names: 1…[NameLimit] bytes
// of UTF-8 without control characters, which a terminal, a web page and a
// Prometheus label can all show.
//
// A [Kind] binds a kind's name to the Go type of its payload, so that both
// are written once and the compiler refuses a payload of another type:
//
//	var welcome = litequeue.NewKind[Email]("email.welcome")
//
//	welcome.Handle(q, func(ctx context.Context, job *litequeue.Job, e Email) error { … })
//	job, err := welcome.Enqueue(ctx, q, Email{To: "ada@example.com"})
//
// Its methods ([Kind.Handle], [Kind.Enqueue], [Kind.EnqueueTx],
// [Kind.EnqueueMany], [Kind.Periodic], [Kind.Args]) are the string API's,
// and encode the payload as it does: a job made by one is run and read by
// the other. The string API stays for kinds known only at run time.
//
// Each [Queue.Work] and [Queue.RunDue] records in the database the kinds
// it has handlers for, so that an enqueue of a kind that no process has
// ever handled — a typo, a worker not yet deployed — is caught before its
// jobs wait forever, also in a process that only enqueues: its first
// enqueue on a [Queue] logs a warning naming the kind, or, with
// [Options.RefuseUnknownKinds], every enqueue of it is refused with an
// error that wraps [ErrUnknownKind]. [Stats.Unhandled] shows the kinds
// with due jobs and no handler on the Queue asking. With its kinds, each
// records its retry policies and what each kind's handler resolved to
// (policy, timeout, limits, expiry, breaker), who recorded them and when,
// where they changed: [Queue.RecordedPolicies] reads them, and the
// dashboard's policies page and "litequeue policy" show them, so that a
// tool without handlers shows what the workers use.
//
// A job is pending (a [Job.RunAt] in the future means scheduled, or waiting
// to retry), waiting for its dependencies (see below), running (leased by
// a worker), or finished: completed, dead, discarded, cancelled or
// expired. [Job.Attempt] is 0 before the first run
// and 1 during it. Each run adds a row to the job's history
// ([Queue.History]): its times, outcome, error, the wait chosen after it,
// and the worker. An error text (a panic's stack included) is kept to
// [MaxErrorText] bytes, 16 KiB: a longer one is cut and ends in
// "…[cut: N bytes in all]".
//
// What the handler returns decides what happens next:
//
//   - nil completes the job.
//   - An error, a panic (recovered, with its stack in the history), or
//     running past the timeout of [WithTimeout] is a failed attempt: the job
//     is retried after a wait, or is dead if that was its last try.
//   - [RetryAfter](d, err) is a failure whose next wait is exactly d.
//   - [Snooze](d) runs the job again after d without using a try.
//   - [Permanent](err) is a failure that is never retried: the job is dead
//     at once.
//   - An error that errors.Is [ErrDiscard] ends the job as discarded: no
//     retry, no alert, for input that can never succeed.
//   - [CancelJob](err) ends the job as cancelled, as [Queue.Cancel] would:
//     no retry, no alert, err's text in the history.
//
// # Outputs, checkpoints and progress
//
// A handler records its result with [RecordOutput](ctx, v), given the
// ctx of its run: JSON-encoded as a payload is, at most
// [Options.MaxOutput] bytes (1 MiB by default), sealed like the payload
// on a Queue with [Options.SealKeys]. It is kept in memory and stored in
// the commit that completes the job, fenced by the run's lease as the
// completion is, so a holder that lost its lease stores neither; a run
// that does not complete stores none. [Queue.Get] reads it as
// [Job.Output] ([Job.DecodeOutput] decodes it); List and a handler's job
// do not carry it. It is deleted with its job.
//
// [Checkpoint](ctx, v) saves, during a run, where the work stands: at
// once, in a commit of its own, fenced by the run's lease (a holder that
// lost its lease gets [ErrLeaseLost] and saves nothing), replacing the
// one before, at most [MaxCheckpoint] bytes. The job's next run — after a
// failure, a process killed mid-run, or [Queue.Replay] — finds it in
// [Job.Checkpoint] and resumes from it; [Queue.ResetCheckpoint] deletes
// it, so that a replay starts over.
//
// [Progress](ctx, done, total) reports how far a run is, as often as the
// handler likes: the reports are kept in memory and written coalesced
// (at once when none was written in the last 250ms on the Queue's clock,
// else the latest at the next lease renewal or at the run's end), without
// an fsync and fenced by the lease. [Queue.Get] and [Queue.List] read it
// as [Job.Progress]; it is kept once the run ends.
//
// # Dependencies and batches
//
// [DependsOn](ids...) makes a job wait for other jobs: it is enqueued
// [Waiting], never claimed while it waits, and becomes pending (due at its
// RunAt, or at once) in the commit of the last of them to complete —
// exactly once, also when two of them complete at the same moment in two
// processes, and through a process killed at any point. Its dependencies
// must exist: enqueued before it, or earlier in the same [Queue.EnqueueTx]
// transaction, so a whole graph enqueued in one [Queue.WriteTx] commits as
// one, and no graph has a cycle. A dependency that fails (goes dead, is
// discarded, cancelled or expires) applies the rule of its edge: by
// default [CancelIfFailed] cancels the dependent, with a history row whose
// error names the dependency, and the dependent's own dependents follow by
// their rules; [WaitIfFailed] keeps it waiting while the dependency is
// dead, so that a [Queue.Replay] of it lets the dependent go on;
// [RunIfFailed] counts the failure as done ([DependsOnRule] per
// dependency, [IfDependencyFails] per job).
// A handler reads its inputs with [Queue.DependencyOutputs];
// [Queue.Dependencies], [Queue.Dependents] and [Queue.Graph] show the
// edges and their states.
//
// [Queue.EnqueueBatch] adds a group of jobs and a callback job that
// depends on each of them in one transaction: the callback runs once,
// when every job of the group has ended (or, with [Batch.AllSucceeded],
// only if every one completed), and counts them by their ends with
// [Queue.DependencyCounts].
//
// # Metadata and middleware
//
// [Metadata](k, v) gives a job a small map of strings, [Job.Metadata],
// kept with it in the file and shown to every run: what travels beside the
// payload, such as a trace context or a request ID. [Queue.Use] and
// [WithMiddleware] wrap handlers in middleware, func(Handler) Handler,
// which sees each run's context, job and result: the place for tracing,
// logging and metrics. The subpackages lqotel and prom hold such
// middleware for OpenTelemetry and Prometheus, so that a program that
// uses neither links neither.
//
// [Queue.UseEnqueue] and [Options.EnqueueMiddleware] wrap the making of
// jobs in enqueue middleware, func([Enqueuer]) Enqueuer: every job that
// [Queue.Enqueue], [Queue.EnqueueTx], [Queue.EnqueueMany] or a periodic
// slot makes, and so a [Kind]'s, passes through it as a [NewJob] before
// it is stored; [Queue.Replay] and [Queue.RunNow], which run a job again,
// do not. It may add metadata (lqotel's starts a producer span and
// carries its context), transform the payload bytes, or refuse the job
// with an error that the call returns, storing nothing.
//
// # Retries
//
// After attempt n fails, with tries left, the job waits d(n) and then
// jitter, as its [Policy] says:
//
//   - [Exponential]: min([Policy.Ceiling], [Policy.Base]·2^(n−1)); Base is
//     the wait before the first retry.
//   - [Linear]: min(Ceiling, Base·n). [Constant]: min(Ceiling, Base).
//   - [FullJitter]: anywhere in [0, d]. [EqualJitter]: d/2 plus up to d/2.
//     [NoJitter]: d.
//
// No wait ever exceeds Ceiling, jitter included, for any attempt number.
// Waits are whole milliseconds; a retry is due at the failed run's end plus
// its wait. The default policy is exponential from 2s, capped at 15m, with
// 8 tries (the first included) and full jitter: the waits before retries
// 1…7 are at most 2s, 4s, 8s, 16s, 32s, 1m4s and 2m8s, 4m14s (254s) in all;
// [Policy.Schedule] lists them for any policy. A policy has 1…50 tries and
// 0 < Base ≤ Ceiling ≤ 24h; [Policy.Validate] refuses anything else.
// The waits of RetryAfter and Snooze are taken as given, clamped to
// [0, 24h], without jitter.
//
// [Options.Retry] is the default policy; [Options.Policies] holds named
// ones, chosen per kind with [UsePolicy]. Zero fields take the defaults,
// and a named policy's zero fields inherit from Options.Retry. [MaxTries]
// sets a single job's tries. [LoadConfig] reads all of this, the settings
// of the queue, and the flow control of kinds ([Options.Kinds]: limits,
// expiry and breaker per kind, see [KindOptions]), from a litequeue.toml
// file.
//
// # Leases
//
// A worker claims a job with a lease of [Options.VisibilityTimeout] (30s by
// default) and a fencing token, and renews the lease in the background for
// as long as the handler runs. If the worker dies, the lease runs out and
// the job comes back — rescued by any process that shares the file — as a
// failed attempt, lease_expired, with the policy's wait, or dead if that was
// its last try. Only the holder of the current token can complete, retry or
// kill a job: a worker whose lease was taken over gets [ErrLeaseLost] and
// changes nothing.
//
// A handler that runs past its timeout has its context cancelled and its
// attempt recorded as timed_out at once; whatever it returns later is
// ignored. When the context of Work is done, workers stop claiming and wait
// up to [WorkerOptions.ShutdownGrace] (30s by default) before they cancel
// the handlers still running; a job whose handler then returns is released
// without using a try. [Queue.Close] shuts down every Work so, and every
// RunDue with a grace of [DefaultShutdownGrace].
//
// Each Work loop records itself in the database — host, pid, queues,
// kinds, concurrency, handlers running — when it starts and every
// [WorkerHeartbeat] (a minute), and deletes the record when Work returns.
// [Queue.Workers] lists the loops of every process, a loop not seen for
// [WorkerSilentAfter] marked silent; the janitor forgets one silent for a
// day.
//
// # Dead letters
//
// A job that used its last try, or failed with Permanent, is dead, with its
// whole history. Nothing runs it again on its own: [Queue.Replay] (or
// [Queue.ReplayDead] for many) puts it back as pending with its attempt
// count reset and its history kept. An operator does the same with
// "litequeue dead list" and "litequeue dead retry <id>" while the app keeps
// running on the file. Dead jobs are purged after [Options.DeadTTL] (14 days
// by default). The event job.dead fires exactly once per death, and
// [Queue.Stats] counts the last hour's deaths per kind and per error class.
// [Queue.Throughput] counts every end — completed, retried, dead,
// discarded, cancelled, expired — per minute or per hour over up to a day,
// from counts that each end adds to in the transaction that stores it, so
// it reads a few rows a minute, not the history; the dashboard charts
// them.
//
// An operator can also make a scheduled or retrying job due at once
// ([Queue.RunNow], "litequeue run-now <id>"), stop a pending or running
// one ([Queue.Cancel], "litequeue cancel <id>"), and delete a finished or
// dead one with its history before its retention ends ([Queue.Delete],
// "litequeue delete <id>"). A job's ID is never given to another job, so
// none of these reaches a job other than the one named. For many jobs at
// once, selected by a [Filter], [Queue.TallyCancel] and
// [Queue.TallyDelete] count them for a person to confirm, and
// [Queue.CancelTallied] and [Queue.DeleteTallied] act on those counted,
// as [Queue.ReplayTallied] does for dead jobs ("litequeue cancel --all",
// "litequeue delete --all"); [WithProgress] reports how far they have got.
//
// # Expiry
//
// A job that is useless once late — a one-time code, a price quote — is
// enqueued with [ExpireAfter](d), or its kind handled [WithExpiry](d): if
// it has not started within d of the moment it is first due (its RunAt at
// enqueue), it ends expired, with a history row of outcome expired and
// the event job.expired; it is neither retried nor dead. Every start
// counts: a retry or a snooze due at or after the expiry expires instead
// of running; a run that started in time is never cut short. Any [Queue]'s
// claim expires what is due before it claims, in the same transaction, and
// the janitor (at the end of each RunDue, and once a minute in Work) does
// it for kinds no worker handles; NextDue does not wait for expiries.
//
// # Retention
//
// Finished jobs are kept for [Options.KeepFinished] (24h) and dead ones for
// Options.DeadTTL (14 days), then purged with their history by the
// janitor. [KeepForever] keeps them for good. [Options.Retention] holds
// rules for one queue, one kind, or one kind on one queue ([Retention]):
// the most specific rule that matches a job applies, and the rule's unset
// times take the [Options]' values. In litequeue.toml:
//
//	[queue]
//	keep_finished = "24h"
//	dead_ttl = "forever"
//
//	[[retention]]
//	queue = "audit"
//	keep_finished = "forever"
//
//	[[retention]]
//	kind = "thumbnail"
//	keep_finished = "10m"
//	dead_ttl = "1d"
//
// # Pause and limits
//
// [Queue.PauseQueue] and [Queue.PauseKind] stop every process on the
// database from claiming a queue's or a kind's jobs, until
// [Queue.ResumeQueue] or [Queue.ResumeKind]; "litequeue pause --queue Q"
// and "litequeue resume --kind K" do the same from a shell. Runs in
// progress finish normally, waiting retries keep their RunAt, and
// Enqueue still adds jobs; a resume wakes idle workers, those of other
// processes on the file at their next poll (≤ 1s). [Stats].Paused lists
// what is paused, and since when.
//
// [MaxRunning](n) and [RateLimit](n, per) limit a kind's runs across every
// process on the database, counted in the claim's transaction: at most n
// running at once (MaxRunning(1) makes them take turns), at most n started
// in any window of length per. Workers with free slots take other kinds
// meanwhile, and nothing polls faster for a kind at its limit: an idle
// worker looks again when a run ends or when the window slides. Limits are
// declared with each process's handlers, so every process that handles a
// kind should declare the same limits: Options.Kinds, which [LoadConfig]
// reads from the [kinds.NAME] tables of litequeue.toml, gives them to
// every process that reads the file, and Handle starts from it.
// [Queue.Limits] reads the limits of this Queue's handlers against each
// kind's running runs and starts in the window now, [Queue.Handled]
// the kinds it handles, and [Queue.CurrentRun] a running job's worker,
// start, lease deadline and timeout, as the dashboard shows them.
//
// # Circuit breaker
//
// When a dependency goes down every job of a kind fails, and retries pile
// up until they die. [WithBreaker] gives a kind's handler a breaker that
// turns that into a paused kind: at the end of a failed run, if
// [Breaker.Failures] of the kind's runs in the last [Breaker.Window] (and
// since the breaker last closed) failed and they are at least
// [Breaker.Ratio] of its completed and failed runs (with the defaults, 20
// in a minute, at least half), the breaker opens. A Permanent failure, a
// panic, a timeout and a lost lease are failures; discarded, cancelled and
// snoozed runs count neither way. While open, nothing more of the kind is
// claimed — runs already claimed finish, the other jobs wait, using no
// tries, their RunAt unchanged — and [Queue.NextDue] reports the
// cool-down's end (30s by default). Then one job runs as its probe: if it
// completes the breaker closes; if it fails the breaker opens again for
// twice as long, at most [Breaker.MaxCooldown] (10m by default). A probe
// released at a shutdown, or cancelled, leaves the breaker open with its
// cool-down over, so the next claim takes another probe; a probe whose
// lease expires counts as failed.
//
// A handler has no breaker unless it is given one: a breaker that trips
// where none was asked for would surprise, and hold back retries the
// program counts on. The breaker's state is kept in the database, so every
// process on it whose handler has the breaker stops claiming the kind. The
// events job.breaker_opened ([Event.Job] is the run that opened it,
// [Event.Err] its failure, [Event.Delay] the cool-down) and
// job.breaker_closed fire after the change commits, and an opening is
// logged as a warning. [Stats].Breakers and "litequeue stats" show each
// breaker that is not closed, [Queue.Breakers] also the closed ones of
// this Queue's handlers; [Queue.ResetBreaker] and "litequeue breaker
// reset <kind>" close one by hand.
//
// # Idempotency
//
// A job may run more than once: a worker can die after its handler's effect
// and before the job's completion commits. [Queue.Seen] and [Queue.Mark]
// keep idempotency keys, with a time to live, in the same file. A handler
// that writes to that file can make its check, its write, its key and the
// job's completion one atomic commit — exactly once, for local effects —
// in [Queue.WriteTx], with [Queue.SeenTx], [Queue.MarkTx] and
// [Queue.CompleteTx]:
//
//	q.Handle("order.place", litequeue.JSON(func(ctx context.Context, job *litequeue.Job, o Order) error {
//		key := "order-placed:" + o.ID
//		return q.WriteTx(ctx, func(tx *sqlx.Tx) error {
//			if done, err := q.SeenTx(ctx, tx, key); err != nil || done {
//				return err // done: placed already; the worker completes this job
//			}
//			if _, err := tx.ExecContext(ctx, `INSERT INTO orders (id, total) VALUES (?, ?)`, o.ID, o.Total); err != nil {
//				return err
//			}
//			if err := q.MarkTx(ctx, tx, key, 30*24*time.Hour); err != nil {
//				return err
//			}
//			return q.CompleteTx(ctx, tx, job)
//		})
//	}))
//
// WriteTx waits for its turn among litequeue's writes, in this process and
// in every other on the file, on the lock they take, so it never fails
// with SQLITE_BUSY because of them. Nothing else writes while fn runs:
// keep it short, and call from it only reads and the …Tx methods (an
// Enqueue or a Mark there would wait for fn itself, and fails after 10s).
// The app's transactions and reads on [Queue.DB] have a pool of their own,
// so litequeue's own reads never wait for them. [UniqueKey] makes an
// enqueue return the pending or running job with the same key, with
// [Job.Duplicate] set, instead of adding another.
//
// # Periodic jobs
//
// [Queue.Periodic] registers a named schedule that enqueues a job at each
// of its slots: a 5-field cron spec ("*/15 * * * *", "0 9 * * MON-FRI",
// parsed by github.com/robfig/cron/v3; a day of the week of 7 is Sunday,
// as 0 is, as in cron(8)), a descriptor (@hourly, @daily …)
// or "@every 90s", whose slots are the multiples of the interval since
// the Unix epoch, so that every process computes the same ones.
//
//	err := q.Periodic(ctx, "nightly-report", "30 2 * * *", "report.build", nil,
//		litequeue.PeriodicIn(berlin), litequeue.PeriodicJob(litequeue.OnQueue("reports")))
//
// Exactly one job per slot, with no leader: any number of processes may
// register the same name on the file (or server); firing a slot is one
// write transaction, the conditional update of the schedule's row in
// litequeue_periodic (last_slot < slot) and, only if it changed the row,
// the job's insert. Whoever comes second changes nothing. RunDue fires
// the due slots before it claims, NextDue includes the next slot, and
// Work wakes for it on the injected clock. Only the latest slot that has
// come is considered, so downtime never causes a burst: a slot evaluated
// [PeriodicGrace] (a minute) late or more was missed, and fires one job
// ([CatchUpOne], the default) or is recorded as skipped ([SkipMissed]).
// A new schedule starts at its latest slot before its registration.
// [Queue.Periodics] and "litequeue periodic list" show the schedules.
//
// A spec is read in UTC unless [PeriodicIn] gives a location. On the days
// the clock changes, the rules are those of cron(8): a spec whose minute
// or hour field is a wildcard ("*/15 * * * *", "0 * * * *", @hourly)
// follows real time, so a day has 92 or 100 quarter hours; a fixed-time
// spec whose time falls in the hour skipped in spring runs once, at the
// end of the gap ("30 2 * * *" in Europe/Berlin on 2026-03-29 runs at
// 03:00 CEST), and one whose time falls in the hour repeated in autumn
// runs once, the first time.
//
// # On a PostgreSQL server
//
// Package github.com/litequeue/litequeue/postgres opens the same [Queue]
// on a PostgreSQL server, for fleets that outgrow one machine; its package
// doc says where the server differs from the file. Two rules are the
// server's own.
//
// A server can go away: restarted, failed over, out of reach. The
// Queue's own calls (Enqueue, the reads, Work's claims, renewals and
// results) are tried again while it is, with waits growing from 50ms to
// 1s, for up to [ServerRetry] (10s) within their context, so that a
// restart or a failover that short costs no error; then they fail with
// [ErrServerGone]. A write whose COMMIT was cut off runs again only once
// the server, back, says that the COMMIT did not take effect; if it
// cannot say, the error is [ErrCommitUnknown] as well, and the write may
// have taken effect.
//
// Every process times the leases it takes and ends, and its janitor's
// purges, by its own clock, so the clocks of the machines that share a
// server must agree. A Queue measures how far its clock reads from the
// server's when it opens and, while it works, at most once a minute, and
// logs it (a warning past half the bound). Past [Options.MaxClockSkew] —
// by default a quarter of VisibilityTimeout, 7.5s, for the real clock —
// it claims, rescues and purges nothing: [Queue.RunDue] returns a
// *[ClockSkewError] naming the skew and the bound, and [Queue.Work] logs
// it and claims again once the clock is back within. A live holder
// renews its lease every third of VisibilityTimeout, so a lease always
// has two thirds of it left; two clocks within a quarter of the server's
// differ by half at most, so no machine sees another's live lease run
// out, and a dead worker's job comes back at most a quarter late. A mock
// clock, which a test steps, is not checked unless MaxClockSkew is set:
// it need only agree with the test's other Queues.
//
// # Payloads sealed at rest
//
// With [Options.SealKeys] set, every payload is stored sealed with
// AES-256-GCM under the first key, its header naming the key's ID, and
// opened where it is read: [Queue.Enqueue], [Queue.Get], [Queue.List] and
// the handler see it as given. A file or a backup that leaves the device
// holds none of the payloads enqueued with the keys in plain text. What
// was stored otherwise stays as stored: a payload enqueued before the
// keys were set, by a process without them (`litequeue enqueue` without
// --key-file) or copied from a database that does not seal; and SQLite
// may keep the bytes of deleted rows in free pages until they are reused
// (VACUUM rewrites the file). [Job.Sealed] tells a sealed payload. To
// rotate, put a new key first and keep the old ones after it: new jobs
// are sealed with the new key, old ones open with theirs. A payload that
// does not open — its key is not given, the wrong key has its ID, or its
// bytes were changed — never reaches a handler: its run fails for good,
// with the ErrorClass "sealed" and an error that names the key and the
// reason, and the job is dead; a replay with the key given runs it. The
// kind, the queue, the metadata, the unique key, the errors and the
// history are not sealed, and neither is what an [Event] carries beyond
// the payload, which is as stored. The queue and the kind are bound to
// the sealed payload; the job's ID is not, so that [Copy] copies sealed
// payloads as they are. The litequeue command opens them with
// --key-file.
//
// # Backups and replicas
//
// [Queue.Backup] writes a consistent copy of the file, mode 0600, while
// the app works on it; [Queue.Health] of the copy reports it as a sound
// Backup, and Open takes it back into use. For a continuous replica, run
// Litestream beside the app and set [Options.Checkpoint] to "off", so that
// checkpoints are Litestream's alone. A restored file is the file as it
// was at one commit, as after a power cut: the jobs that were running
// then come back once their lease ends, counting a try, and a job that
// finished after that commit runs again.
//
// # Monitoring
//
// [Queue.Stats] reads the jobs per queue, kind and state from counts kept
// beside them, in the transaction of every change, and does not read
// every job. litequeue keeps them in each of its writes, [Queue.EnqueueTx]
// and [Queue.CompleteTx] in the app's transaction included; on a
// PostgreSQL server triggers on the jobs' table keep them, whoever
// writes. The app's own SQL on the jobs of a file goes uncounted:
// [Queue.Health] reports the difference and [Queue.RecountJobs] mends it. What changes with the clock
// rather than with a write is read through the index of pending jobs by
// kind: the pending jobs not yet due, one by one (few, where most pending
// jobs are due; in the index alone for a kind in one queue), and, per
// queue and kind with due jobs, the oldest one,
// one probe each (a kind in several queues steps over the earlier jobs of
// the other queues). [Queue.Health] recounts the jobs and reports a count
// that differs; [Queue.RecountJobs] rewrites them, as "litequeue check
// --repair" does. A file of schema version 5 or older counts its jobs once,
// in the migration of the first Open that writes to it; one opened with
// [OpenReadOnly] keeps none, and Stats reads every job of it.
//
// # Testing with a fake clock
//
// Every time litequeue stores or compares comes from [Options.Clock], and
// every jitter draw from [Options.Rand], so a test can step through a retry
// schedule deterministically, without sleeping: give it a
// github.com/benbjohnson/clock mock, run what is due with RunDue, ask
// [Queue.NextDue] when the next job is due, and move the clock there.
//
//	clk := clock.NewMock()
//	q, err := litequeue.Open(filepath.Join(t.TempDir(), "q.db"), litequeue.Options{
//		Clock: clk,
//		Retry: litequeue.Policy{Jitter: litequeue.NoJitter}, // waits of exactly 2s, 4s, 8s…
//	})
//	…
//	for {
//		if _, err := q.RunDue(ctx); err != nil {
//			t.Fatal(err)
//		}
//		next, ok, err := q.NextDue(ctx)
//		if err != nil {
//			t.Fatal(err)
//		}
//		if !ok {
//			break // nothing left to run: every job is finished
//		}
//		clk.Set(next)
//	}
//
// Drive the clock from the test's goroutine where possible: the mock's Add
// and Set do not wait for other goroutines to react. Under [WithTimeout] a
// handler's ctx.Deadline lies on the mock's timeline too.
//
// The package github.com/litequeue/litequeue/litequeuetest runs this loop
// as Drain, bounded (it fails the test, naming the jobs still due, if the
// queue never settles), and asserts what was enqueued:
//
//	clk := clock.NewMock()
//	q, err := litequeue.Open(filepath.Join(t.TempDir(), "q.db"), litequeue.Options{Clock: clk})
//	…
//	q.Handle("signup", signup) // enqueues "email.welcome"
//	if _, err := q.Enqueue(t.Context(), "signup", "ada@example.com"); err != nil {
//		t.Fatal(err)
//	}
//	litequeuetest.Drain(t, q, clk) // runs signup and its retries, moving clk
//	litequeuetest.RequireEnqueued(t, q, "email.welcome",
//		litequeuetest.Payload("ada@example.com"))
package litequeue
