package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// command is one of litequeue's commands: how it is used, what it does,
// its flags and its subcommands. The help is generated from the table of
// them, commands.
type command struct {
	name  string // as typed, subcommand included: "dead retry"
	usage string // the usage line, after "litequeue "
	short string // what it does, in one line
	group string // the heading it is listed under in "litequeue help"
	// The positional arguments it takes: min to max, or min or more for a
	// max < 0.
	min, max int
	// setup defines the command's flags on fs and returns the function
	// that runs it on the positional arguments; nil for a command that is
	// only a name for its subcommands.
	setup func(c *cli, fs *flagSet) runFunc
	subs  []*command
}

// runFunc runs a command, its flags parsed, on its positional arguments.
type runFunc func(ctx context.Context, args []string) error

// The headings of "litequeue help".
const (
	inspectGroup = "Inspect (read-only, safe while the app runs):"
	changeGroup  = "Change (through the library's write path, beside running workers):"
	otherGroup   = "Other:"
)

// commands is the table of every command, in the order of the help.
func commands() []*command {
	return []*command{
		{name: "stats", usage: "stats [--json]", group: inspectGroup, setup: (*cli).stats,
			short: "jobs per queue and state; retries and deaths in the last hour; what is paused"},
		{name: "list", usage: "list [--state S] [FILTER] [--limit N] [--json]", group: inspectGroup, setup: (*cli).list,
			short: "jobs, oldest first"},
		{name: "show", usage: "show ID [--json]", group: inspectGroup, min: 1, max: 1, setup: (*cli).show,
			short: "a job, its payload and its whole attempt history"},
		{name: "flow", usage: "flow ID [--json]", group: inspectGroup, min: 1, max: 1, setup: (*cli).flow,
			short: "the graph of jobs a job's dependencies connect it to, in dependency order"},
		{name: "dead", usage: "dead list|retry|purge ...", short: "dead letters: list, replay, delete", subs: []*command{
			{name: "dead list", usage: "dead list [FILTER] [--limit N] [--json]", group: inspectGroup, setup: (*cli).deadList,
				short: "the dead letters, in ID order"},
			{name: "dead retry", usage: "dead retry ID... | dead retry --all [FILTER] [--dry-run] [--yes] [--json]", group: changeGroup,
				max: -1, setup: (*cli).deadRetry,
				short: "replay dead jobs: pending again, tries reset, history kept"},
			{name: "dead purge", usage: "dead purge [--older-than D] [--dry-run] [--yes] [--json]", group: changeGroup, setup: (*cli).deadPurge,
				short: "delete dead jobs and their history for good"},
		}},
		{name: "periodic", usage: "periodic list ...", short: "periodic jobs: their schedules", subs: []*command{
			{name: "periodic list", usage: "periodic list [--name N] [--json]", group: inspectGroup, setup: (*cli).periodicList,
				short: "the schedules in the file: spec, last slot and job, next slot"},
		}},
		{name: "workers", usage: "workers [--json]", group: inspectGroup, setup: (*cli).workers,
			short: "the Work loops on the database, of every process; silent ones marked"},
		{name: "check", usage: "check [--repair] [--json]", group: inspectGroup, setup: (*cli).check,
			short: "integrity, schema version, WAL size, counts; exit 1 if wrong"},
		{name: "policy", usage: "policy [NAME] [--json]", group: inspectGroup, max: 1, setup: (*cli).policy,
			short: "the worst-case retry schedule of a policy", subs: []*command{
				{name: "policy simulate", usage: "policy simulate [NAME] [--jobs N] [--outage D] [--svg FILE] [--seed S] [--json]",
					group: inspectGroup, max: 1, setup: (*cli).simulate,
					short: "what a dependency sees when N jobs fail together"},
			}},
		{name: "cancel", usage: "cancel ID... | cancel --all [--state S] [FILTER] [--dry-run] [--yes] [--json]",
			group: changeGroup, max: -1, setup: (*cli).cancel,
			short: "cancel pending, waiting or running jobs: those named, or all that match"},
		{name: "run-now", usage: "run-now ID... [--json]", group: changeGroup, min: 1, max: -1, setup: (*cli).runNow,
			short: "make pending jobs (scheduled, waiting to retry) due now"},
		{name: "pause", usage: "pause --queue Q | --kind K [--json]", group: changeGroup, setup: (*cli).pauseCmd,
			short: "stop every worker from claiming a queue's or a kind's jobs"},
		{name: "resume", usage: "resume --queue Q | --kind K [--json]", group: changeGroup, setup: (*cli).resumeCmd,
			short: "let the workers claim a paused queue or kind again"},
		{name: "delete", usage: "delete ID... | delete --all --state S [FILTER] [--dry-run] [--yes] [--json]",
			group: changeGroup, max: -1, setup: (*cli).deleteJobs,
			short: "delete finished or dead jobs and their history: those named, or all that match"},
		{name: "breaker", usage: "breaker reset KIND", short: "circuit breakers: close one by hand", subs: []*command{
			{name: "breaker reset", usage: "breaker reset KIND [--json]", group: changeGroup, min: 1, max: 1, setup: (*cli).breakerReset,
				short: "close a kind's circuit breaker: its jobs are claimed again at once"},
		}},
		{name: "enqueue", usage: "enqueue KIND [JSON] [--queue Q] [--delay D] [--priority P] [--unique KEY] [--max-tries N] [--after IDS [--if-failed RULE]] [--json]",
			group: changeGroup, min: 1, max: 2, setup: (*cli).enqueue,
			short: "add a job"},
		{name: "copy", usage: "copy --to DB [--from DB] [--json]", group: changeGroup, setup: (*cli).copyJobs,
			short: "copy unfinished and dead jobs, with history, into another database"},
		{name: "migrate", usage: "migrate [--print] [--json]", group: otherGroup, setup: (*cli).migrate,
			short: "make or upgrade litequeue's tables in the database, or print their SQL"},
		{name: "backup", usage: "backup --to PATH [--force]", group: otherGroup, setup: (*cli).backup,
			short: "a consistent copy of the database, taken while the app runs"},
		{name: "serve", usage: "serve [--addr HOST:PORT] [--token T] [--allow-host H]... [--allow-writes] [--access-log]", group: otherGroup, setup: (*cli).serve,
			short: "the web dashboard of the file (read-only unless --allow-writes)"},
		{name: "demo", usage: "demo [--db PATH] [--jobs N] [--resume]", group: otherGroup, setup: (*cli).demo,
			short: "a self-contained tour on a new database"},
		{name: "version", usage: "version", group: otherGroup, setup: (*cli).version,
			short: "the module and Go versions"},
		{name: "help", usage: "help [COMMAND]", group: otherGroup, max: -1, setup: (*cli).help,
			short: "this text, or the flags of a command"},
	}
}

// find returns the command that args name, the longest match, and the
// arguments after its name.
func find(args []string) (*command, []string, error) {
	cmds, name := commands(), ""
	var cmd *command
	for len(args) > 0 {
		i := slices.IndexFunc(cmds, func(c *command) bool { return c.name == strings.TrimSpace(name+" "+args[0]) })
		if i < 0 {
			break
		}
		cmd, cmds, name, args = cmds[i], cmds[i].subs, cmds[i].name, args[1:]
	}
	if cmd == nil {
		return nil, nil, usageErrorf("unknown command %q%s (run 'litequeue help' for the list)", args[0], didYouMean(args[0], "", commands()))
	}
	return cmd, args, nil
}

// runCommand parses the flags and arguments of cmd in args and runs it;
// with -h, it writes cmd's help instead.
func (c *cli) runCommand(ctx context.Context, cmd *command, args []string) error {
	if cmd.setup == nil {
		return c.runGroup(cmd, args)
	}
	fs := c.flagSet(cmd)
	run := cmd.setup(c, fs)
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	return run(ctx, pos)
}

// runGroup runs a command that is only a name for its subcommands, with
// none of them named in args: it writes its help for -h, else fails.
func (c *cli) runGroup(cmd *command, args []string) error {
	var err error
	switch {
	case len(args) == 0:
		err = fmt.Errorf("%s needs a command: %s", cmd.name, subNames(cmd))
	case slices.Contains([]string{"-h", "-help", "--help", "help"}, args[0]):
		c.writeHelp(cmd)
		return nil
	default:
		err = fmt.Errorf("unknown command \"%s %s\"%s", cmd.name, args[0], didYouMean(args[0], cmd.name+" ", cmd.subs))
	}
	return &exitError{code: exitUsage, err: err, hint: cmd.usage}
}

// subNames lists the last words of cmd's subcommands: "list, retry or
// purge".
func subNames(cmd *command) string {
	var names []string
	for _, sub := range cmd.subs {
		names = append(names, strings.TrimPrefix(sub.name, cmd.name+" "))
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
