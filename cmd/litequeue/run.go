package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/benbjohnson/clock"
	"golang.org/x/term"

	"github.com/litequeue/litequeue"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // a runtime error
	exitUsage   = 2 // bad arguments, or a config file with errors
)

// defaultDB is the database used without --db or $LITEQUEUE_DB.
const defaultDB = "litequeue.db"

const usage = `usage: litequeue [--db PATH] [--config FILE] COMMAND [ARGS]

Inspect (read-only, safe while the app runs; each takes --json):
  stats                   jobs per queue and state; retries and deaths in the last hour
  list                    jobs [--state S] [--queue Q] [--kind K] [--limit N]
  show ID                 a job, its payload and its whole attempt history
  dead list               dead letters [--queue Q] [--kind K] [--limit N]
  check                   integrity, schema version, WAL size, counts; exit 1 if wrong
  policy [NAME]           the worst-case retry schedule of a policy
  policy simulate [NAME] [--jobs N] [--outage D] [--svg FILE] [--seed S]
                          what a dependency sees when N jobs fail together

Change (through the library's write path, beside running workers):
  dead retry ID...        replay dead jobs; or --all [--queue Q] [--kind K] [--dry-run] [--yes]
  dead purge              delete dead jobs [--older-than D] [--dry-run] [--yes]
  cancel ID...            cancel pending or running jobs
  run-now ID...           make pending jobs (scheduled, waiting to retry) due now
  delete ID...            delete finished or dead jobs and their history
  enqueue KIND [JSON]     add a job [--queue Q] [--delay D] [--priority P] [--unique KEY]
                          [--max-tries N] [--json]

Other:
  demo                    a self-contained tour on a new database [--db PATH] [--jobs N]
                          [--resume]
  version                 the module and Go versions
  help [COMMAND]          this text, or the flags of a command

The database is --db, else $LITEQUEUE_DB, else ./litequeue.db; policies come
from --config (a litequeue.toml), else the defaults. Flags may follow the
arguments. Durations take Go syntax plus d for days: 90s, 1h30m, 14d.
Exit status: 0 ok, 1 runtime error, 2 usage or config error.
`

// cli is one run of the command. Everything it takes from its surroundings
// is a field, so that tests drive it without a terminal, an environment or
// the wall clock.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// Which standard streams are terminals. A prompt needs stdin and stderr
	// to be one; colour, the stream it is written to; the demo's progress
	// bar, stderr.
	stdinTTY, stdoutTTY, stderrTTY bool
	getenv                         func(string) string
	clock                          clock.Clock // for every queue the command opens; nil: the real clock
	self                           string      // how the user runs this command, in the commands it suggests

	// The global flags, which every command also accepts.
	db, config string
}

// run runs the command line args (without the program name) and returns
// the exit status. It stops what it is doing on an interrupt.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := &cli{
		stdin:     stdin,
		stdout:    stdout,
		stderr:    stderr,
		stdinTTY:  isTerminal(stdin),
		stdoutTTY: isTerminal(stdout),
		stderrTTY: isTerminal(stderr),
		getenv:    os.Getenv,
		self:      selfName(),
	}
	return c.run(ctx, args)
}

// isTerminal reports whether v is a file open on a terminal.
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// selfName returns how the user ran this command: "go run ./cmd/litequeue"
// for a binary that go run built (in the current directory's module),
// else the program's name.
func selfName() string {
	exe, err := os.Executable()
	if err == nil && strings.Contains(filepath.ToSlash(exe), "/go-build") {
		if _, err := os.Stat(filepath.Join("cmd", "litequeue", "main.go")); err == nil {
			return "go run ./cmd/litequeue"
		}
	}
	return "litequeue"
}

// run runs args and turns the outcome into an exit status, writing the
// error, if any, to stderr.
func (c *cli) run(ctx context.Context, args []string) int {
	out := &errWriter{w: c.stdout}
	c.stdout = out
	err := c.dispatch(ctx, args)
	if errors.Is(err, flag.ErrHelp) {
		err = nil
	}
	if err == nil && out.err != nil {
		err = fmt.Errorf("write output: %w", out.err)
	}
	if err == nil {
		return exitOK
	}
	code := exitFailure
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
		if ee.err == nil {
			return code // already reported
		}
	}
	msg := strings.TrimPrefix(err.Error(), "litequeue: ")
	fmt.Fprintf(c.stderr, "litequeue: %s\n", msg)
	if code == exitUsage && ee.hint != "" {
		fmt.Fprintf(c.stderr, "usage: litequeue %s\n", ee.hint)
	}
	return code
}

// errWriter keeps the first error of its writes, so that output written
// without checking each write (a table, a line of text) still fails the
// command when it did not all get out: stdout on a full disk, say.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// exitError carries an exit status other than 1. A nil err means the
// problem was already reported (by the flag package, or as data).
type exitError struct {
	code int
	err  error
	hint string // the command's usage line, shown under a usage error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageErrorf reports bad arguments: exit status 2.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// command is one of the command's commands.
type command struct {
	name string
	run  func(c *cli, ctx context.Context, args []string) error
}

// commands lists every command, in the order of the usage text.
func commands() []command {
	return []command{
		{"stats", (*cli).stats},
		{"list", (*cli).list},
		{"show", (*cli).show},
		{"dead", (*cli).dead},
		{"check", (*cli).check},
		{"policy", (*cli).policy},
		{"cancel", (*cli).cancel},
		{"run-now", (*cli).runNow},
		{"delete", (*cli).deleteJobs},
		{"enqueue", (*cli).enqueue},
		{"demo", (*cli).demo},
		{"version", (*cli).version},
	}
}

// dispatch parses the global flags and runs the command they precede.
func (c *cli) dispatch(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("litequeue", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.globalFlags(fs)
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(c.stdout, usage)
		return err
	} else if err != nil {
		return &exitError{code: exitUsage, err: err, hint: "[--db PATH] [--config FILE] COMMAND [ARGS]"}
	}
	args = fs.Args()
	if len(args) == 0 {
		fmt.Fprint(c.stderr, usage)
		return &exitError{code: exitUsage}
	}
	name, args := args[0], args[1:]
	if name == "help" {
		if len(args) == 0 {
			fmt.Fprint(c.stdout, usage)
			return nil
		}
		// "help dead retry" is "dead retry -h".
		name, args = args[0], append(args[1:], "-h")
	}
	i := slices.IndexFunc(commands(), func(cmd command) bool { return cmd.name == name })
	if i < 0 {
		return usageErrorf("unknown command %q (run 'litequeue help' for the list)", name)
	}
	return commands()[i].run(c, ctx, args)
}

// globalFlags adds --db and --config to fs.
func (c *cli) globalFlags(fs *flag.FlagSet) {
	fs.Var(pathFlag{&c.db}, "db", "the database `path` (default $LITEQUEUE_DB, else ./"+defaultDB+")")
	fs.Var(pathFlag{&c.config}, "config", "a litequeue.toml `file` with the retry policies")
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
	use string // the usage line, after "litequeue "
}

// flagSet returns the FlagSet of the command whose usage line is given; it
// also takes the global flags.
func (c *cli) flagSet(name, usageLine string) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse reports errors
	fs.Usage = func() {}
	c.globalFlags(fs)
	return &flagSet{fs, c, usageLine}
}

// parse parses args, allowing flags after the positional arguments ("dead
// retry 5 --yes"), and returns the positional ones, of which there must be
// lo to hi (lo or more for hi < 0). Everything after "--" is positional.
// With -h it writes the command's help and returns flag.ErrHelp.
func (fs *flagSet) parse(args []string, lo, hi int) ([]string, error) {
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
			return pos, wantArgs(fs.use, pos, lo, hi)
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// error turns an error of flag.Parse into a usage error, or writes the
// help, on stdout, for flag.ErrHelp.
func (fs *flagSet) error(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(fs.c.stdout, "usage: litequeue %s\n\nflags:\n", fs.use)
		fs.SetOutput(fs.c.stdout)
		fs.PrintDefaults()
		return err
	}
	return &exitError{code: exitUsage, err: err, hint: fs.use}
}

// isSet reports whether the flag was given, also with its default value.
func (fs *flagSet) isSet(name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// wantArgs checks the number of positional arguments.
func wantArgs(usageLine string, args []string, lo, hi int) error {
	switch {
	case len(args) < lo:
		return &exitError{code: exitUsage, err: errors.New("missing arguments"), hint: usageLine}
	case hi >= 0 && len(args) > hi:
		return &exitError{code: exitUsage, err: fmt.Errorf("unexpected argument %q", args[hi]), hint: usageLine}
	}
	return nil
}

// dbPath returns the database the command works on.
func (c *cli) dbPath() string {
	if c.db != "" {
		return c.db
	}
	if p := c.getenv("LITEQUEUE_DB"); p != "" {
		return p
	}
	return defaultDB
}

// options returns the Options of --config, or the defaults. A config file
// with errors is a usage error.
func (c *cli) options() (litequeue.Options, error) {
	var opts litequeue.Options
	if c.config != "" {
		var err error
		if opts, err = litequeue.LoadConfig(c.config); err != nil {
			return opts, &exitError{code: exitUsage, err: fmt.Errorf("config: %w", err)}
		}
	}
	opts.Clock = c.clock
	return opts, nil
}

// openRead opens the database read-only, for inspection. It never creates
// a file.
func (c *cli) openRead() (*litequeue.Queue, error) {
	return c.open(litequeue.OpenReadOnly)
}

// openWrite opens the database through the library's own write path,
// beside any app working on it. It does not create a missing file either,
// nor adopt a file without litequeue's tables, which it leaves as it was:
// a mistyped path must not quietly start an empty queue, or turn the
// app's own database into one.
func (c *cli) openWrite() (*litequeue.Queue, error) {
	return c.open(litequeue.OpenExisting)
}

func (c *cli) open(open func(string, litequeue.Options) (*litequeue.Queue, error)) (*litequeue.Queue, error) {
	opts, err := c.options()
	if err != nil {
		return nil, err
	}
	path := c.dbPath()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist (name the database with --db or $LITEQUEUE_DB)", path)
	}
	return open(path, opts)
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

// durationFlag defines a duration flag on fs.
func durationFlag(fs *flag.FlagSet, name string, value time.Duration, usage string) *time.Duration {
	d := durationValue(value)
	fs.Var(&d, name, usage)
	return (*time.Duration)(&d)
}
