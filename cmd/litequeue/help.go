package main

import (
	"context"
	"fmt"
	"io"
	"slices"
)

// globalUsage is the usage line of litequeue itself.
const globalUsage = "[--db PATH] [--config FILE] [--key-file FILE] COMMAND [ARGS]"

// helpNotes ends the help, after the list of commands.
const helpNotes = `The database is --db, else $LITEQUEUE_DB, else ./litequeue.db: a file's path,
or a PostgreSQL server's postgres:// URL; policies come from --config (a
litequeue.toml), else from the database, as the app's workers recorded them,
else the defaults; the keys of payloads
sealed at rest from --key-file, else they show as "sealed (key ID)". Flags
may follow the arguments. Durations take Go syntax plus d for days: 90s, 1h30m, 14d.
FILTER selects jobs: --queue Q, --kind K, --after ID and --before ID (job IDs,
the bounds left out: --after the last ID of a page gives the next one), and
--error-contains TEXT (in the last error, ASCII letters in either case).
Exit status: 0 ok, 1 runtime error, 2 usage or config error.
`

// help defines the flags of "help" on fs, none of its own, and returns
// the command: the overview, or the help of the command its arguments
// name.
func (c *cli) help(fs *flagSet) runFunc {
	return func(_ context.Context, args []string) error {
		if len(args) == 0 {
			writeOverview(c.stdout)
			return nil
		}
		cmd, rest, err := find(args)
		switch {
		case err != nil:
			return err
		case len(rest) > 0 && cmd.setup == nil:
			return c.runGroup(cmd, rest) // no such subcommand
		}
		c.writeHelp(cmd)
		return nil
	}
}

// writeOverview writes the help of litequeue: every command, under its
// group's heading.
func writeOverview(w io.Writer) {
	fmt.Fprintf(w, "usage: litequeue %s\n", globalUsage)
	var all []*command
	for _, cmd := range commands() {
		all = append(all, cmd)
		all = append(all, cmd.subs...)
	}
	for _, group := range []string{inspectGroup, changeGroup, otherGroup} {
		fmt.Fprintf(w, "\n%s\n", group)
		writeCommands(w, slices.DeleteFunc(slices.Clone(all), func(cmd *command) bool { return cmd.group != group }))
	}
	fmt.Fprintf(w, "\n%s", helpNotes)
}

// writeCommands writes the usage line of each command, and what it does
// beside it, or under it for a long one.
func writeCommands(w io.Writer, cmds []*command) {
	const column = 24
	for _, cmd := range cmds {
		if len(cmd.usage) < column-1 {
			fmt.Fprintf(w, "  %-*s%s\n", column, cmd.usage, cmd.short)
		} else {
			fmt.Fprintf(w, "  %s\n  %*s%s\n", cmd.usage, column, "", cmd.short)
		}
	}
}

// writeHelp writes the help of one command: its usage, then its flags, or
// its subcommands.
func (c *cli) writeHelp(cmd *command) {
	w := c.stdout
	fmt.Fprintf(w, "usage: litequeue %s\n\n", cmd.usage)
	if cmd.setup != nil {
		fs := c.flagSet(cmd)
		cmd.setup(c, fs)
		fmt.Fprintln(w, "flags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	if len(cmd.subs) == 0 {
		return
	}
	if cmd.setup != nil {
		fmt.Fprintln(w, "\ncommands:")
	}
	writeCommands(w, cmd.subs)
	fmt.Fprintf(w, "\nRun \"litequeue %s COMMAND -h\" for the flags of one.\n", cmd.name)
}
