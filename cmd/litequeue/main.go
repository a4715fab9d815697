// Command litequeue inspects and repairs a litequeue database while the app
// keeps running on it — a SQLite file, or a PostgreSQL server named by a
// postgres:// URL: stats, lists, a job's whole history, dead letters and
// their replay, cancel and delete by ID or by filter, pause, enqueue, the
// retry schedule of a policy and a simulation of what its jitter does to a
// dependency, an integrity check, a backup, copies between databases, the
// migration of a server's tables, the web dashboard, and a self-contained
// demo for newcomers. Every write and dry run takes --json; on a terminal,
// copies and bulk acts show their progress.
//
// Reads go through a read-only connection; writes through the library's
// own write path, so they are safe beside running workers. "litequeue
// help" lists the commands (a test keeps this list the same), and
// "litequeue help COMMAND" shows the flags of one:
//
//	usage: litequeue [--db PATH] [--config FILE] [--key-file FILE] COMMAND [ARGS]
//
//	Inspect (read-only, safe while the app runs):
//	  stats [--json]          jobs per queue and state; retries and deaths in the last hour; what is paused
//	  list [--state S] [FILTER] [--limit N] [--json]
//	                          jobs, oldest first
//	  show ID [--json]        a job, its payload and its whole attempt history
//	  flow ID [--json]        the graph of jobs a job's dependencies connect it to, in dependency order
//	  dead list [FILTER] [--limit N] [--json]
//	                          the dead letters, in ID order
//	  periodic list [--name N] [--json]
//	                          the schedules in the file: spec, last slot and job, next slot
//	  workers [--json]        the Work loops on the database, of every process; silent ones marked
//	  check [--repair] [--json]
//	                          integrity, schema version, WAL size, counts; exit 1 if wrong
//	  policy [NAME] [--json]  the worst-case retry schedule of a policy
//	  policy simulate [NAME] [--jobs N] [--outage D] [--svg FILE] [--seed S] [--json]
//	                          what a dependency sees when N jobs fail together
//
//	Change (through the library's write path, beside running workers):
//	  dead retry ID... | dead retry --all [FILTER] [--dry-run] [--yes] [--json]
//	                          replay dead jobs: pending again, tries reset, history kept
//	  dead purge [--older-than D] [--dry-run] [--yes] [--json]
//	                          delete dead jobs and their history for good
//	  cancel ID... | cancel --all [--state S] [FILTER] [--dry-run] [--yes] [--json]
//	                          cancel pending, waiting or running jobs: those named, or all that match
//	  run-now ID... [--json]  make pending jobs (scheduled, waiting to retry) due now
//	  pause --queue Q | --kind K [--json]
//	                          stop every worker from claiming a queue's or a kind's jobs
//	  resume --queue Q | --kind K [--json]
//	                          let the workers claim a paused queue or kind again
//	  delete ID... | delete --all --state S [FILTER] [--dry-run] [--yes] [--json]
//	                          delete finished or dead jobs and their history: those named, or all that match
//	  breaker reset KIND [--json]
//	                          close a kind's circuit breaker: its jobs are claimed again at once
//	  enqueue KIND [JSON] [--queue Q] [--delay D] [--priority P] [--unique KEY] [--max-tries N] [--after IDS [--if-failed RULE]] [--json]
//	                          add a job
//	  copy --to DB [--from DB] [--json]
//	                          copy unfinished and dead jobs, with history, into another database
//
//	Other:
//	  migrate [--print] [--json]
//	                          make or upgrade litequeue's tables in the database, or print their SQL
//	  backup --to PATH [--force]
//	                          a consistent copy of the database, taken while the app runs
//	  serve [--addr HOST:PORT] [--token T] [--allow-host H]... [--allow-writes] [--access-log]
//	                          the web dashboard of the file (read-only unless --allow-writes)
//	  demo [--db PATH] [--jobs N] [--resume]
//	                          a self-contained tour on a new database
//	  version                 the module and Go versions
//	  help [COMMAND]          this text, or the flags of a command
//
//	The database is --db, else $LITEQUEUE_DB, else ./litequeue.db: a file's path,
//	or a PostgreSQL server's postgres:// URL; policies come from --config (a
//	litequeue.toml), else from the database, as the app's workers recorded them,
//	else the defaults; the keys of payloads
//	sealed at rest from --key-file, else they show as "sealed (key ID)". Flags
//	may follow the arguments. Durations take Go syntax plus d for days: 90s, 1h30m, 14d.
//	FILTER selects jobs: --queue Q, --kind K, --after ID and --before ID (job IDs,
//	the bounds left out: --after the last ID of a page gives the next one), and
//	--error-contains TEXT (in the last error, ASCII letters in either case).
//	Exit status: 0 ok, 1 runtime error, 2 usage or config error.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
