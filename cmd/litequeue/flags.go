package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/litequeue/litequeue"
)

// globalFlags adds --db and --config to fs.
func (c *cli) globalFlags(fs *flag.FlagSet) {
	fs.Var(pathFlag{&c.db}, "db", "the database: a file `path` or a postgres:// URL (default $LITEQUEUE_DB, else ./"+defaultDB+")")
	fs.Var(pathFlag{&c.config}, "config", "a litequeue.toml `file` with the retry policies")
	fs.Var(pathFlag{&c.keyFile}, "key-file", keyFileUsage)
}

// pathFlag is a flag naming a file, which must not be empty: an empty
// --db would quietly fall back to $LITEQUEUE_DB, an empty --config to the
// default policies.
type pathFlag struct{ p *string }

func (f pathFlag) String() string {
	if f.p == nil {
		return ""
	}
	return *f.p
}

func (f pathFlag) Set(s string) error {
	if s == "" {
		return errors.New("the path is empty")
	}
	*f.p = s
	return nil
}

// flagSet is the flags of one command.
type flagSet struct {
	*flag.FlagSet
	c   *cli
	cmd *command
}

// flagSet returns an empty FlagSet for cmd, but for the global flags,
// which every command takes.
func (c *cli) flagSet(cmd *command) *flagSet {
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse reports errors
	fs.Usage = func() {}
	c.globalFlags(fs)
	return &flagSet{fs, c, cmd}
}

// parse parses args, allowing flags after the positional arguments ("dead
// retry 5 --yes"), and returns the positional ones, of which there must be
// as many as the command takes. Everything after "--" is positional. With
// -h it writes the command's help and returns flag.ErrHelp.
func (fs *flagSet) parse(args []string) ([]string, error) {
	var rest []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, rest = args[:i], args[i+1:]
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, fs.error(err)
		}
		args = fs.Args()
		if len(args) == 0 {
			pos = append(pos, rest...)
			return pos, fs.wantArgs(pos)
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// error turns an error of flag.Parse into a usage error, or writes the
// help, on stdout, for flag.ErrHelp.
func (fs *flagSet) error(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		fs.c.writeHelp(fs.cmd)
		return err
	}
	return fs.usageError(err)
}

// usageError is err, a usage error of the command, with its usage line.
func (fs *flagSet) usageError(err error) error {
	return &exitError{code: exitUsage, err: err, hint: fs.cmd.usage}
}

// wantArgs checks the number of positional arguments.
func (fs *flagSet) wantArgs(args []string) error {
	lo, hi := fs.cmd.min, fs.cmd.max
	switch {
	case len(args) < lo:
		return fs.usageError(errors.New("missing arguments"))
	case hi >= 0 && len(args) > hi:
		return fs.usageError(fmt.Errorf("unexpected argument %q", args[hi]))
	}
	return nil
}

// isSet reports whether the flag was given, also with its default value.
func (fs *flagSet) isSet(name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// jsonFlag defines --json, for a command that writes JSON instead of
// text.
func (fs *flagSet) jsonFlag() *bool {
	return fs.Bool("json", false, "write JSON")
}

// filterFlags are --queue, --kind, --after, --before and
// --error-contains, which select jobs.
type filterFlags struct {
	queue, kind, errorContains *string
	after, before              *int64
}

// filterFlags defines the flags that select jobs; before, if any, starts
// their usage ("with --all: ").
func (fs *flagSet) filterFlags(before string) filterFlags {
	return filterFlags{
		queue:         fs.String("queue", "", before+"only jobs on this `queue`"),
		kind:          fs.String("kind", "", before+"only jobs of this `kind`"),
		after:         fs.Int64("after", 0, before+"only jobs with an ID above this `ID`, the last of a page, say; 0: no bound"),
		before:        fs.Int64("before", 0, before+"only jobs with an ID below this `ID`; 0: no bound"),
		errorContains: fs.String("error-contains", "", before+"only jobs whose last error contains this `text`, ASCII letters in either case"),
	}
}

// filter returns the Filter of the jobs in state that the flags select,
// or a usage error for a negative ID.
func (f filterFlags) filter(state litequeue.State) (litequeue.Filter, error) {
	for name, id := range map[string]int64{"after": *f.after, "before": *f.before} {
		if id < 0 {
			return litequeue.Filter{}, usageErrorf("--%s %d is negative: give a job ID, or 0 for no bound", name, id)
		}
	}
	return litequeue.Filter{State: state, Queue: *f.queue, Kind: *f.kind,
		After: *f.after, Before: *f.before, ErrorContains: *f.errorContains}, nil
}

// selects reports whether any of the flags is set.
func (f filterFlags) selects() bool {
	return *f.queue != "" || *f.kind != "" || *f.after != 0 || *f.before != 0 || *f.errorContains != ""
}

// limitFlag defines --limit, for a command that lists jobs.
func (fs *flagSet) limitFlag() *int {
	return fs.Int("limit", 100, "show at most `N` jobs, oldest first; 0: all")
}

// durationValue is a flag holding a duration in Go syntax plus d for days,
// as in the config file: "90s", "1h30m", "14d", "1d12h".
type durationValue time.Duration

func (d *durationValue) String() string { return time.Duration(*d).String() }

func (d *durationValue) Set(s string) error {
	v, err := litequeue.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = durationValue(v)
	return nil
}

// durationFlag defines a duration flag.
func (fs *flagSet) durationFlag(name string, value time.Duration, usage string) *time.Duration {
	d := durationValue(value)
	fs.Var(&d, name, usage)
	return (*time.Duration)(&d)
}

// parseID checks a job ID argument.
func parseID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(s, "-"):
		return 0, usageErrorf("job ID %s is over the largest, %d", s, int64(math.MaxInt64))
	case err != nil || id <= 0:
		return 0, usageErrorf("job ID %q is not a positive whole number", s)
	}
	return id, nil
}

// parseIDs checks every job ID argument.
func parseIDs(args []string) ([]int64, error) {
	ids := make([]int64, len(args))
	for i, a := range args {
		var err error
		if ids[i], err = parseID(a); err != nil {
			return nil, err
		}
	}
	return ids, nil
}
