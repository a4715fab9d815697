#!/usr/bin/env bash
# run.sh builds the benchmark binary once, runs every peer × workload RUNS
# times, interleaved (one process per run), and writes RESULTS.md and the
# raw result lines (results.jsonl) beside itself.
#
#   RUNS=3         runs per (peer, workload); the table shows medians, min–max
#   QUICK=1        tiny sizes, for a CI smoke test (RESULTS.md is not written
#                  unless OUT is given)
#   PEERS="…"      a subset of: litequeue goqite river river-tuned backlite
#                  asynq asynq-nopersist bare litequeue-postgres
#                  river-postgres river-postgres-tuned (the -tuned peers:
#                  River with FetchCooldown 1ms, FetchPollInterval 50ms)
#   WORKLOADS="…"  a subset of: enqueue enqueue16 batch drain latency pickup retry idle drain100k
#                  growth10k growth1m (growth: 10,000 of 10,000 or 1,000,000
#                  waiting jobs drained, litequeue only; QUICK: 1,000 of 3,000
#                  or 30,000)
#   REDIS_FSYNC=always   asynq's Redis: appendfsync always (like SQLite's
#                  synchronous=FULL), everysec or no; asynq-nopersist's
#                  Redis has no persistence at all (no AOF, no RDB)
#   NOTE="…"       a note added to RESULTS.md (e.g. "the machine was shared")
#   OUT=dir        where to write RESULTS.md and results.jsonl (default: here)
#
# asynq needs redis-server: run.sh starts one on a free loopback port (two:
# asynq-nopersist has its own, without persistence) and stops it by its pid. If it is missing, run.sh tries apt-get (as root) and
# otherwise runs asynq's workloads as "—" with a message.
#
# litequeue-postgres and river-postgres(-tuned) need a PostgreSQL server: the one LITEQUEUE_BENCH_POSTGRES
# or LITEQUEUE_TEST_POSTGRES names (a DSN whose user may create databases),
# or else one that run.sh starts with ../.ci/postgres and stops at the end.
# Each run creates a database of its own and drops it. Without a server
# they show "—".
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cd "$here"

RUNS=${RUNS:-3}
QUICK=${QUICK:-0}
PEERS=${PEERS:-litequeue goqite river river-tuned backlite asynq asynq-nopersist bare litequeue-postgres river-postgres river-postgres-tuned}
WORKLOADS=${WORKLOADS:-enqueue enqueue16 batch drain latency pickup retry idle drain100k growth10k growth1m}
REDIS_FSYNC=${REDIS_FSYNC:-always}
NOTE=${NOTE:-}
if [[ $QUICK == 1 ]]; then
	OUT=${OUT:-}
else
	OUT=${OUT:-$here}
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/lqbench-run.XXXXXX")
redis_pids=()
pg_dir="" # the PostgreSQL cluster run.sh started, if it did
cleanup() {
	for pid in "${redis_pids[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	if [[ -n $pg_dir ]]; then
		../.ci/postgres stop "$pg_dir" || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

echo "run.sh: building" >&2
go build -o "$work/lqbench" .

# Sizes. The binary's defaults are the full sizes.
declare -A size
if [[ $QUICK == 1 ]]; then
	size[enqueue]="-n 100"
	size[enqueue16]="-n 160"
	size[batch]="-n 2000"
	size[drain]="-n 300"
	size[drain100k]="-n 3000"
	size[growth10k]="-n 3000 -drain 1000"
	size[growth1m]="-n 30000 -drain 1000"
	size[retry]="-n 60"
	size[latency]="-latency-for 1s"
	size[pickup]="-latency-for 1s"
	size[idle]="-idle 1s"
	timeout=180
else
	size[latency]="-latency-for 5s"
	size[pickup]="-latency-for 5s"
	size[idle]="-idle 10s"
	timeout=900
fi

# start_redis VAR NAME ARGS… starts redis-server for the peer NAME on a free
# loopback port with the persistence ARGS, and sets VAR to its address; it
# returns 1 (the peer is then skipped) if there is none.
redis_addr=""    # asynq's: appendfsync $REDIS_FSYNC
redis_np_addr="" # asynq-nopersist's: no AOF, no RDB
start_redis() {
	local var=$1 name=$2
	shift 2
	if ! command -v redis-server >/dev/null 2>&1; then
		if command -v apt-get >/dev/null 2>&1 && [[ $(id -u) == 0 ]]; then
			echo "run.sh: installing redis-server for asynq" >&2
			{ DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server ||
				{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server; }; } >/dev/null 2>&1 || true
		fi
	fi
	if ! command -v redis-server >/dev/null 2>&1; then
		echo "run.sh: redis-server is not installed and could not be: asynq is skipped" >&2
		return 1
	fi
	local port=""
	for _ in $(seq 50); do
		local p=$((20000 + RANDOM % 20000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			port=$p
			break
		fi
	done
	if [[ -z $port ]]; then
		echo "run.sh: no free port for Redis: $name is skipped" >&2
		return 1
	fi
	mkdir -p "$work/redis-$name"
	redis-server --port "$port" --bind 127.0.0.1 --save '' "$@" \
		--dir "$work/redis-$name" --logfile "$work/redis-$name/log" --daemonize no &
	local pid=$!
	redis_pids+=("$pid")
	for _ in $(seq 50); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "run.sh: redis-server for $name (pid $pid) on 127.0.0.1:$port, $*" >&2
			printf -v "$var" '%s' "127.0.0.1:$port"
			return 0
		fi
		sleep 0.1
	done
	echo "run.sh: redis-server did not start: $name is skipped" >&2
	kill "$pid" 2>/dev/null || true
	return 1
}
if [[ " $PEERS " == *" asynq "* ]]; then
	start_redis redis_addr asynq --appendonly yes --appendfsync "$REDIS_FSYNC" || true
fi
if [[ " $PEERS " == *" asynq-nopersist "* ]]; then
	start_redis redis_np_addr asynq-nopersist --appendonly no || true
fi

# The PostgreSQL peers' server: the one named in the environment, or one
# started here.
pg_dsn=${LITEQUEUE_BENCH_POSTGRES:-${LITEQUEUE_TEST_POSTGRES:-}}
pg_from=""
if [[ -n $pg_dsn ]]; then
	pg_from="given by the environment"
elif [[ " $PEERS " == *"-postgres"* ]]; then
	if pgenv=$(../.ci/postgres start); then
		eval "$pgenv"
		pg_dir=$LITEQUEUE_POSTGRES_DIR
		pg_dsn=$LITEQUEUE_TEST_POSTGRES
		pg_from="started by run.sh (.ci/postgres: a fresh cluster, the server's default settings, on loopback)"
	else
		echo "run.sh: no PostgreSQL server could be started: the PostgreSQL peers are skipped" >&2
	fi
fi
# pg_setting prints one of the server's settings, or "unknown".
pg_setting() {
	if [[ -n $pg_dsn ]] && command -v psql >/dev/null 2>&1; then
		psql "$pg_dsn" -XAtc "SELECT current_setting('$1')" 2>/dev/null || echo unknown
	else
		echo unknown
	fi
}

results="$work/results.jsonl"
: >"$results"
failures=0

# json_string escapes stdin into a JSON string's contents.
json_string() {
	tr -d '\000-\010\013-\037' | tr '\n\t' '  ' | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g'
}

read -r -a peers <<<"$PEERS"
read -r -a wls <<<"$WORKLOADS"
for run in $(seq "$RUNS"); do
	for wl in "${wls[@]}"; do
		# Rotate the peers' order from run to run.
		for i in "${!peers[@]}"; do
			peer=${peers[$(((i + run - 1) % ${#peers[@]}))]}
			# shellcheck disable=SC2206
			args=(-peer "$peer" -workload "$wl" ${size[$wl]:-} -timeout "$((timeout - 60))s")
			if [[ $peer == asynq-nopersist ]]; then
				if [[ -n $redis_np_addr ]]; then
					args+=(-redis "$redis_np_addr")
				fi
			elif [[ -n $redis_addr ]]; then
				args+=(-redis "$redis_addr")
			fi
			if [[ -n $pg_dsn ]]; then
				args+=(-postgres "$pg_dsn")
			fi
			if out=$(TMPDIR="$work" timeout --kill-after=10 "$timeout" "$work/lqbench" "${args[@]}" 2>"$work/stderr"); then
				echo "$out" >>"$results"
				echo "run.sh: run $run/$RUNS $wl $peer: $out" >&2
			else
				rc=$?
				failures=$((failures + 1))
				msg=$( { echo "exit $rc:"; tail -c 600 "$work/stderr"; } | json_string)
				echo "{\"peer\":\"$peer\",\"workload\":\"$wl\",\"failed\":\"$msg\"}" >>"$results"
				echo "run.sh: run $run/$RUNS $wl $peer FAILED: $msg" >&2
			fi
		done
	done
done

# The machine and the settings, appended to the report.
dbfs=$(df -T "$work" | awk 'NR == 2 { print $2 " (" $1 ")" }')
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
cat >"$work/machine.md" <<EOF
## Machine

- date: $(date -u '+%Y-%m-%d %H:%M UTC')
- nproc: $(nproc)
- CPU: ${cpu:-unknown}
- memory: $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null || echo unknown)
- Go: $(go version)
- kernel: $(uname -srm)
- filesystem of the database files: $dbfs
- load average at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
- Redis: $(if [[ -n $redis_addr$redis_np_addr ]]; then redis-server --version | cut -d' ' -f3 | sed 's/^v=//'; else echo "none (asynq skipped)"; fi)
- PostgreSQL: $(if [[ -n $pg_dsn ]]; then echo "$(pg_setting server_version), $pg_from"; else echo "none (the PostgreSQL peers skipped)"; fi)
${NOTE:+- note: $NOTE}

## Settings

- runs per (peer, workload): $RUNS, interleaved (each run round goes through every workload and peer, the peers' order rotated from round to round); one process per run, with a fresh database file (or a flushed Redis) in a temp dir.
- sizes: $(if [[ $QUICK == 1 ]]; then echo "QUICK (tiny: a smoke test, not figures)"; else echo "enqueue 2,000 jobs; enqueue16 4,000 jobs from 16 goroutines; batch 20 calls × 1,000; drain 3,000 pre-enqueued jobs; latency 200 jobs/s for 5 s, each Enqueue from its own goroutine, after 0.5 s of idle workers; pickup the same rate and length, enqueued by a second process (the benchmark binary again) on the same store, timed from the enqueue call there (wall clock, stamped into the payload) to the handler's start here; retry 500 jobs × 3 tries; idle 10 s after 1 s to settle; drain100k 100,000 jobs (litequeue only); growth10k and growth1m 10,000 and 1,000,000 jobs waiting, filled with EnqueueMany in batches of 1,000 (not timed), then 10,000 of them drained with 16 workers (timed), litequeue only"; fi).
- growth10k, growth1m: the bytes on disk are the database file + -wal + -shm, measured after the fill and before the drain, divided by the waiting jobs; the peak RSS is the process's Maxrss at the end of the drain (through the fill and the drain), read before the check. The workers stop once the fixed number of jobs has run; the rest stay waiting.
- payload: about 100 bytes of JSON; every handler decodes it and does nothing else.
- peers: each peer's own settings are in the table "Peers" above, as its runs printed them.
- workers: 16 everywhere (litequeue Concurrency, goqite Limit, River MaxWorkers, backlite NumWorkers, asynq Concurrency).
- SQLite peers (goqite, river, river-tuned, backlite, bare): modernc.org/sqlite v1.62.0, one connection (as goqite's and River's docs advise), journal_mode=WAL, synchronous=FULL, busy_timeout=10s, BEGIN IMMEDIATE. litequeue opens its file itself with its defaults (WAL, synchronous=FULL).
- retry: 10 ms constant delay, no jitter, 3 tries. litequeue: Policy{Constant, 10ms, 10ms, 3, NoJitter}; River: worker NextRetry = now + 10 ms, MaxAttempts 3; backlite: Backoff 10 ms, MaxAttempts 3; goqite: message Timeout 10 ms (its retry delay is the visibility timeout), MaxReceive 3; asynq: RetryDelayFunc 10 ms, MaxRetry(2), and DelayedTaskCheckInterval 10 ms (default 5 s: retries wait in a set that is only forwarded that often).
- polling: every peer's defaults (goqite PollInterval 100 ms; asynq TaskCheckInterval 1 s; backlite and litequeue wake on in-process enqueues), but for River, which runs twice on either driver: river and river-postgres with River's defaults, FetchCooldown 100 ms and FetchPollInterval 1 s, which bound its drain near MaxWorkers (16) jobs per 100 ms; river-tuned and river-postgres-tuned with FetchCooldown 1 ms and FetchPollInterval 50 ms, River's fetch loop tuned for throughput and latency.
- PostgreSQL peers (litequeue-postgres, river-postgres, river-postgres-tuned): $(if [[ -n $pg_dsn ]]; then echo "fsync $(pg_setting fsync), synchronous_commit $(pg_setting synchronous_commit) (a commit is on disk when it returns, as with synchronous=FULL), shared_buffers $(pg_setting shared_buffers), on loopback TCP; a fresh database per run. litequeue-postgres: postgres.Open, its tables created at Open, database/sql's default pool, the same Options as litequeue. river-postgres and river-postgres-tuned: River's tables from rivermigrate; a pgxpool of 16 connections, one per worker or producer (pgxpool's default is max(4, cores)). Their CPU and peak RSS are the client process's only, without the server"; else echo "not available"; fi).
- asynq: Redis $(if [[ -n $redis_addr ]]; then echo "on loopback, no RDB snapshots, appendonly yes, appendfsync $REDIS_FSYNC"; else echo "not available"; fi). asynq-nopersist: the same asynq on a Redis of its own $(if [[ -n $redis_np_addr ]]; then echo "on loopback without persistence (no RDB snapshots, appendonly no): an acknowledged enqueue is in memory only"; else echo "(not available)"; fi). Their peak RSS is asynq's process only, without Redis.
- times: the timed phase only (wall clock); CPU is getrusage user+sys of the process over the timed phase (per job: divided by the phase's jobs; for the PostgreSQL peers the client process's only, without the server's); peak RSS is the process's Maxrss.
- latency is measured twice, to the handler's first start: from the Enqueue call (the time taken just before the call, kept by job; it includes the durable commit: an fsync) and from Enqueue's return. A handler may start before its Enqueue returns (the job is claimed while the call is on its way back): from the return it counts as 0 ms, never as a negative or a missing sample, and the table gives the share of such handlers.
- checks: drain, drain100k, retry, latency, pickup and idle runs fail unless every job's handler ran exactly once (3 times in retry) and the store holds no unfinished job after the workers stop; growth10k and growth1m runs, which leave jobs waiting, fail unless at least the fixed number of jobs ran, none more than once, and the store holds as unfinished exactly the waiting jobs that did not run; enqueue, enqueue16 and batch runs fail unless reading the payloads back from the store finds every job exactly once.
- failures during this run: $failures
EOF

if [[ -n $OUT ]]; then
	mkdir -p "$OUT"
	cp "$results" "$OUT/results.jsonl"
	"$work/lqbench" -report "$results" -machine "$work/machine.md" >"$OUT/RESULTS.md"
	echo "run.sh: wrote $OUT/RESULTS.md" >&2
else
	"$work/lqbench" -report "$results" -machine "$work/machine.md" >/dev/null
	echo "run.sh: QUICK run done, report checked (not written; set OUT=dir to keep it)" >&2
fi
if ((failures > 0)); then
	echo "run.sh: $failures run(s) FAILED" >&2
	exit 1
fi
