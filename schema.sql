-- litequeue schema, version 7. Times are Unix milliseconds from the
-- injected clock (a mock clock may well stand at 0, so "unset" is NULL in
-- the columns that a Job shows, and 0 only in internal ones). Written to
-- run on PostgreSQL too with three substitutions: INTEGER PRIMARY KEY
-- AUTOINCREMENT -> BIGSERIAL PRIMARY KEY (a job ID is never handed out
-- twice, also once its job is purged: SQLite's AUTOINCREMENT and
-- PostgreSQL's sequence both promise it), INTEGER PRIMARY KEY -> BIGSERIAL
-- PRIMARY KEY, BLOB -> BYTEA.
-- It runs whole at every Open, on a new file, an older one and one of this
-- version (to add an index added since, which needs no new version): every
-- statement can run again without harm. A file of version 1 or 2 has its
-- litequeue_jobs rebuilt first, to add AUTOINCREMENT, and one of version 3
-- gains its metadata column, one of version 3 or 4 its expires_at column
-- (see migrate.go).

-- 'schema_version': this file's version; 'database_id': a random ID,
-- written by the first Open that finds none, by which Copy knows the file
-- as a source (copy.go).
CREATE TABLE IF NOT EXISTS litequeue_meta (
	name  TEXT PRIMARY KEY,
	value TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS litequeue_jobs (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	queue         TEXT    NOT NULL,
	kind          TEXT    NOT NULL,
	payload       BLOB    NOT NULL,
	state         TEXT    NOT NULL,
	priority      INTEGER NOT NULL DEFAULT 0,
	attempt       INTEGER NOT NULL DEFAULT 0,
	max_tries     INTEGER NOT NULL,           -- effective; rewritten at each claim
	own_max_tries INTEGER NOT NULL DEFAULT 0, -- MaxTries given at enqueue; 0: the policy's
	run_at        INTEGER,                    -- NULL once completed
	created_at    INTEGER NOT NULL,
	finished_at   INTEGER,                    -- NULL until terminal
	last_error    TEXT    NOT NULL DEFAULT '',
	unique_key    TEXT,                       -- NULL: none
	token         INTEGER NOT NULL DEFAULT 0, -- fencing token, bumped by each claim
	lease_until   INTEGER NOT NULL DEFAULT 0,
	started_at    INTEGER NOT NULL DEFAULT 0, -- of the current run
	worker        TEXT    NOT NULL DEFAULT '',-- of the current run
	retry_delay   INTEGER NOT NULL DEFAULT 0, -- ms to wait if the current run fails or is lost
	cancel        INTEGER NOT NULL DEFAULT 0, -- 1: Cancel asked the running holder to stop
	metadata      TEXT,                       -- Job.Metadata as a JSON object; NULL: none (version 4)
	expires_at    INTEGER,                    -- ExpireAfter: not started by then, the job expires; NULL: never (version 5)
	dependents    INTEGER NOT NULL DEFAULT 0  -- edges of litequeue_deps into this job (version 7)
);

-- Claim: each kind's due pending jobs in priority, then RunAt, then ID
-- order, one ordered probe per kind handled and priority its jobs have
-- (see internal/store/sqlite/claim.go); NextDue: a
-- kind's earliest RunAt, one probe per priority its pending jobs have
-- (see nextPendingSQL). Version 6: it was (priority DESC, run_at, id),
-- beside litequeue_jobs_next (kind, run_at), two index writes per job
-- that enqueue and claim now spend once (see upgradeIndexes).
CREATE INDEX IF NOT EXISTS litequeue_jobs_claim
	ON litequeue_jobs (kind, priority DESC, run_at, id) WHERE state = 'pending';

-- Rescue: running jobs by lease expiry.
CREATE INDEX IF NOT EXISTS litequeue_jobs_lease
	ON litequeue_jobs (lease_until) WHERE state = 'running';

-- Unique enqueue: one live job per key.
CREATE UNIQUE INDEX IF NOT EXISTS litequeue_jobs_unique
	ON litequeue_jobs (unique_key) WHERE unique_key IS NOT NULL AND state IN ('pending', 'running');

-- Retention and Count of finished jobs. Only terminal rows have a
-- finished_at, so only they are in it: pending and running rows, which
-- change state at every claim and every run, stay out (the claim and lease
-- indexes serve them), which saves three index writes per job. Version 1
-- indexed every row (litequeue_jobs_state).
DROP INDEX IF EXISTS litequeue_jobs_state;
CREATE INDEX IF NOT EXISTS litequeue_jobs_finished
	ON litequeue_jobs (state, finished_at) WHERE finished_at IS NOT NULL;

-- List of the jobs that stopped short of completing (dead, discarded,
-- cancelled, expired) in ID order: a page of the newest dead jobs, or the
-- page before or after a cursor, reads its rows and stops, where
-- litequeue_jobs_finished (in finished_at order) would sort every dead
-- job first. Completed jobs, nearly every finished row, stay out: one
-- index write per job that completes cost the drain 6% of its jobs a
-- second, and their pages are read from the table itself in ID order,
-- where they are most of the rows (see stateCond in inspect.go). It costs
-- one index write when a job stops, none while it is pending, running or
-- once it completes. Added to version 3 without a new version: Open runs
-- this file on a file of the current version too (see migrate.go), so an
-- older file gains it, and loses the index of every finished job in ID
-- order it replaces (litequeue_jobs_list), at its next Open; queries do
-- not name it, as OpenReadOnly migrates nothing.
DROP INDEX IF EXISTS litequeue_jobs_list;
CREATE INDEX IF NOT EXISTS litequeue_jobs_stopped
	ON litequeue_jobs (state, id) WHERE finished_at IS NOT NULL AND state <> 'completed';

CREATE TABLE IF NOT EXISTS litequeue_attempts (
	id          INTEGER PRIMARY KEY,
	job_id      INTEGER NOT NULL,
	attempt     INTEGER NOT NULL,
	started_at  INTEGER NOT NULL,
	finished_at INTEGER NOT NULL,
	outcome     TEXT    NOT NULL,
	error       TEXT    NOT NULL DEFAULT '',
	error_class TEXT    NOT NULL DEFAULT '',
	delay       INTEGER NOT NULL DEFAULT 0, -- ms
	worker      TEXT    NOT NULL DEFAULT '',
	kind        TEXT    NOT NULL,           -- for Stats, without a join
	next_state  TEXT    NOT NULL            -- the job's state after this row: retry or death, for Stats
);

-- History: a job's rows in the order the runs started.
CREATE INDEX IF NOT EXISTS litequeue_attempts_job
	ON litequeue_attempts (job_id, started_at, id);

-- Version 6 has no index of the rows by finished_at (version 5's
-- litequeue_attempts_recent, one write per run): Stats reads the last
-- hour's failures through litequeue_attempts_breaker, and a breaker's
-- count of completed runs the rows from the window's first ID on (see
-- stats.go and window.go).

CREATE TABLE IF NOT EXISTS litequeue_keys (
	key        TEXT    PRIMARY KEY,
	expires_at INTEGER NOT NULL
);

CREATE INDEX IF NOT EXISTS litequeue_keys_expiry
	ON litequeue_keys (expires_at);

-- Version 5: time-driven work and flow control. Each part keeps its own
-- tables here, in its own section.

-- Expiry (expire.go).
-- Expiry: pending jobs whose expiry has come, at each claim and sweep;
-- with none, one empty probe. Only jobs with an expiry are in it.
CREATE INDEX IF NOT EXISTS litequeue_jobs_expiry
	ON litequeue_jobs (expires_at) WHERE state = 'pending' AND expires_at IS NOT NULL;

-- Pause (pause.go).
-- A paused queue (scope 'queue') or kind (scope 'kind'): nothing of it is
-- claimed until it is resumed. since: when it was first paused.
CREATE TABLE IF NOT EXISTS litequeue_paused (
	scope TEXT    NOT NULL,
	name  TEXT    NOT NULL,
	since INTEGER NOT NULL,
	PRIMARY KEY (scope, name)
);

-- Per-kind limits (limits.go).
-- The recent starts of each rate-limited kind, one row per run started,
-- pruned by the claims as they age out of the kind's window.
CREATE TABLE IF NOT EXISTS litequeue_starts (
	kind       TEXT    NOT NULL,
	started_at INTEGER NOT NULL
);

CREATE INDEX IF NOT EXISTS litequeue_starts_window
	ON litequeue_starts (kind, started_at);

-- Circuit breakers (breaker.go).

-- A row per kind whose breaker has opened; once closed it stays, in state
-- 'closed', with when it closed in open_until, from which failures count.
CREATE TABLE IF NOT EXISTS litequeue_breakers (
	kind         TEXT    PRIMARY KEY,
	state        TEXT    NOT NULL,           -- 'open', 'half_open' or 'closed'
	opened_at    INTEGER NOT NULL,           -- when it last left closed
	open_until   INTEGER NOT NULL,           -- the cool-down's end: from then on, a probe may start; closed: when it closed
	trips        INTEGER NOT NULL,           -- times opened since it was last closed
	probe        INTEGER NOT NULL DEFAULT 0, -- half_open: the job ID of its probe
	cooldown     INTEGER NOT NULL,           -- ms, the current cool-down
	max_cooldown INTEGER NOT NULL            -- ms, the cap on its doubling
);

-- Breaker: a kind's failed runs in the window, at each failure of a kind
-- with a breaker. Only failed rows are in it: a completed run, the common
-- case, costs no write here. Its condition is the text of failedSQL
-- (job.go), which the queries that use it repeat: ORs, where SQLite
-- evaluated "outcome IN (…)" of four values through an ephemeral table
-- that each row inserted built afresh. It replaced litequeue_attempts_failed,
-- of that IN, in version 5 without a new version: Open runs this file on a
-- file of the current version too (see migrate.go), so a file gains it,
-- and loses the old one, at its next Open.
DROP INDEX IF EXISTS litequeue_attempts_failed;
CREATE INDEX IF NOT EXISTS litequeue_attempts_breaker
	ON litequeue_attempts (kind, finished_at)
	WHERE (outcome = 'failed' OR outcome = 'panicked' OR outcome = 'timed_out' OR outcome = 'lease_expired');

-- Periodic jobs (periodic.go).

-- One row per schedule registered with Queue.Periodic, by name: its
-- definition as the newest registration gave it (for the litequeue
-- command and for the processes whose own definition differs, which fire
-- nothing), and the latest slot fired or skipped. Firing a slot is the
-- conditional UPDATE of last_slot, and the job's insert only where it
-- changed the row: one job per slot whatever the number of processes.
CREATE TABLE IF NOT EXISTS litequeue_periodic (
	name          TEXT    PRIMARY KEY,
	spec          TEXT    NOT NULL,
	kind          TEXT    NOT NULL,
	queue         TEXT    NOT NULL,
	location      TEXT    NOT NULL,            -- a time zone name: "UTC", "Europe/Berlin"
	missed        TEXT    NOT NULL,            -- what a missed slot does: "one" or "skip"
	last_slot     INTEGER NOT NULL,            -- ms: the latest slot fired or skipped
	last_skipped  INTEGER NOT NULL DEFAULT 0,  -- 1 if last_slot was skipped
	last_job_id   INTEGER NOT NULL DEFAULT 0,  -- the job of the latest slot fired; 0: none yet
	fired_at      INTEGER NOT NULL DEFAULT 0,  -- ms: when that job was enqueued; 0: never
	registered_at INTEGER NOT NULL             -- ms: the newest registration
);

-- Copy (copy.go).

-- A row per job that Copy copied into this file, kept for good (deleting
-- a row forgets it), so that a later Copy from the same source skips the
-- job, also once its copy here has finished and been purged. fingerprint
-- is what made the job (see jobFingerprint), source the ID of the
-- database it came from ('' for one that had none), source_id its ID
-- there, job_id its ID here. Added to version 5 without a new version:
-- Open runs this file on a file of the current version too (see
-- migrate.go), so a file gains it at its next Open, before any Copy into
-- it (OpenReadOnly, which migrates nothing, cannot be copied into).
CREATE TABLE IF NOT EXISTS litequeue_copied (
	source      TEXT    NOT NULL,
	fingerprint TEXT    NOT NULL,
	source_id   INTEGER NOT NULL,
	job_id      INTEGER NOT NULL,
	copied_at   INTEGER NOT NULL,
	PRIMARY KEY (source, fingerprint)
);

-- Handled kinds (handled.go).

-- A row per kind that a Work or RunDue of any process has had a handler
-- for, so that a process that only enqueues can tell a kind that nobody
-- handles (Options.RefuseUnknownKinds). first_seen: the first such run;
-- last_seen: the latest record, which a worker refreshes at its start and
-- at most once an hour. Rows are never deleted: a kind once handled stays
-- known. Added to version 5 without a new version, as litequeue_copied
-- was: Open runs this file on a file of the current version too, so a
-- file gains it at its next Open (OpenReadOnly, which migrates nothing,
-- neither records nor checks kinds).
CREATE TABLE IF NOT EXISTS litequeue_kinds (
	kind       TEXT    PRIMARY KEY,
	first_seen INTEGER NOT NULL,
	last_seen  INTEGER NOT NULL
);

-- Recorded policies (recorded.go).

-- A row per scope of the retry policies and kind options that a worker
-- uses: scope 'default' (name ''), 'policy' (a named policy) or 'kind' (a
-- kind handled, with its policy, timeout, limits, expiry and breaker).
-- value is the resolved value as JSON, durations in milliseconds;
-- recorded_at (ms), host and pid say who wrote that value and when. Each
-- Work and RunDue writes its rows when it records the kinds it handles
-- (litequeue_kinds), each only where its value changed. Rows are never
-- deleted: several apps on one database each keep the scopes they wrote.
-- Added to version 5 without a new version, as litequeue_kinds was.
CREATE TABLE IF NOT EXISTS litequeue_policies (
	scope       TEXT    NOT NULL,
	name        TEXT    NOT NULL,
	value       TEXT    NOT NULL,
	recorded_at INTEGER NOT NULL,
	host        TEXT    NOT NULL,
	pid         INTEGER NOT NULL,
	PRIMARY KEY (scope, name)
);

-- Throughput (throughput.go).

-- The ends of runs and jobs counted per minute, so that the figures of the
-- last hour and day read a few rows instead of every history row: minute
-- is the start of the minute (ms, on Unix time) the ends fell in; outcome
-- one of completed, retried, dead, discarded, cancelled, expired; shard
-- the writer's (0 on a file, whose writers take turns); n how many. Each
-- end is counted in the transaction that stores it. The janitor deletes
-- the minutes older than 25 hours. Added to version 5 without a new
-- version, as litequeue_kinds was: a file gains it at its next Open (a
-- binary before it counts nothing, and OpenReadOnly of a file without it
-- reads no throughput).
CREATE TABLE IF NOT EXISTS litequeue_throughput (
	minute  INTEGER NOT NULL,
	outcome TEXT    NOT NULL,
	shard   INTEGER NOT NULL,
	n       INTEGER NOT NULL,
	PRIMARY KEY (minute, outcome, shard)
) WITHOUT ROWID;

-- Workers (heartbeat.go).

-- A row per Work loop at work on the database: it writes its row when it
-- starts and again every WorkerHeartbeat (a minute) on its clock, and
-- deletes it when Work returns; the janitor deletes the rows of loops
-- silent for a day (a process that died, a machine gone). id: random,
-- made when Work starts; queues and kinds: JSON arrays of names, queues
-- [] for every queue; running: the handlers running at last_seen. No
-- index: a row per live loop, read whole. Added without a new version,
-- as litequeue_kinds was: Open runs this file on a file of the current
-- version too, so a file gains it at its next Open (OpenReadOnly, which
-- migrates nothing, cannot Work, and reads no workers where it has none).
CREATE TABLE IF NOT EXISTS litequeue_workers (
	id          TEXT    PRIMARY KEY,
	name        TEXT    NOT NULL,
	host        TEXT    NOT NULL,
	pid         INTEGER NOT NULL,
	queues      TEXT    NOT NULL,
	kinds       TEXT    NOT NULL,
	concurrency INTEGER NOT NULL,
	running     INTEGER NOT NULL,
	started     INTEGER NOT NULL,
	last_seen   INTEGER NOT NULL
);

-- Outputs (output.go, internal/store/outputs.go).

-- A row per completed job whose handler recorded an output
-- (RecordOutput): written by the settle in the transaction that completes
-- the run, fenced by the run's lease as the completion is; output is the
-- value as recorded (JSON, or bytes as given), sealed like the payload on
-- a Queue with SealKeys. Deleted with its job (Delete, retention, the
-- janitor). Added without a new version, as litequeue_kinds was: a file
-- gains it at its next Open (OpenReadOnly of a file without it reads no
-- outputs).
CREATE TABLE IF NOT EXISTS litequeue_outputs (
	job_id INTEGER PRIMARY KEY,
	output BLOB    NOT NULL
);

-- Checkpoints (checkpoint.go, internal/store/checkpoints.go).

-- A row per job whose handler saved a checkpoint (Checkpoint): written at
-- once, in a commit of its own, fenced by the run's lease; read back by
-- the job's next claim; kept by a replay (ResetCheckpoint deletes it);
-- sealed like the payload on a Queue with SealKeys. Deleted with its job.
-- Added without a new version, as litequeue_outputs was.
CREATE TABLE IF NOT EXISTS litequeue_checkpoints (
	job_id     INTEGER PRIMARY KEY,
	checkpoint BLOB    NOT NULL
);

-- Progress (progress.go's Progress, internal/store/progress.go).

-- A row per job whose handler reported its progress (Progress): done of
-- total (0: not known), at (ms) when reported; written coalesced, at most
-- every 250ms on the Queue's clock, at a lease renewal and at the run's
-- end, fenced by the run's lease, without an fsync; kept once the run
-- ends. Deleted with its job. Added without a new version, as
-- litequeue_outputs was.
CREATE TABLE IF NOT EXISTS litequeue_progress (
	job_id INTEGER PRIMARY KEY,
	done   INTEGER NOT NULL,
	total  INTEGER NOT NULL,
	at     INTEGER NOT NULL
);

-- Counts (internal/store/counts.go).

-- Version 6: the jobs per queue, kind and state, kept in the same
-- transaction as every insert, delete, and change of a job's state,
-- queue or kind that litequeue makes: each of its statements adds its
-- changes in one upsert (store.Deltas). Stats and the dashboard read
-- these rows, not every job. litequeue_jobs has no triggers for them (a
-- row trigger costs every job's insert, claim and end), so the app's own
-- SQL on litequeue_jobs goes uncounted: Health reports the difference and
-- litequeue check --repair rewrites the counts. shard is always 0 in a
-- file (a server keeps one per session, see its schema.sql); a row may
-- stay at 0. A file of version 5 or older is counted once, from one scan,
-- in the migration's transaction (see migrate.go).
CREATE TABLE IF NOT EXISTS litequeue_counts (
	queue TEXT    NOT NULL,
	kind  TEXT    NOT NULL,
	state TEXT    NOT NULL,
	shard INTEGER NOT NULL,
	n     INTEGER NOT NULL,
	PRIMARY KEY (queue, kind, state, shard)
) WITHOUT ROWID;

-- Dependencies (depends.go; internal/store/deps.go). Version 7.

-- An edge per job and job it depends on: rule, what the dependency's
-- failure does to the job ('cancel', 'wait' or 'run'); state, 'open'
-- until the dependency's end decides it, then 'met' or 'failed'. Kept
-- until the job is deleted; the dependency may be gone before.
CREATE TABLE IF NOT EXISTS litequeue_deps (
	job_id     INTEGER NOT NULL,
	depends_on INTEGER NOT NULL,
	rule       TEXT    NOT NULL,
	state      TEXT    NOT NULL,
	PRIMARY KEY (job_id, depends_on)
);

-- A job's end: the edges into it; Dependents.
CREATE INDEX IF NOT EXISTS litequeue_deps_on
	ON litequeue_deps (depends_on, job_id);

-- Jobs waiting for their dependencies, for List and Copy: a write only
-- for a job enqueued with dependencies, and at its release.
CREATE INDEX IF NOT EXISTS litequeue_jobs_waiting
	ON litequeue_jobs (id) WHERE state = 'waiting';

-- A row per job waiting on dependencies: how many of its edges are open.
-- The last end to take it to 0 makes the job pending.
CREATE TABLE IF NOT EXISTS litequeue_waits (
	job_id    INTEGER PRIMARY KEY,
	remaining INTEGER NOT NULL
);
