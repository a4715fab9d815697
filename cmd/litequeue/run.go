package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/benbjohnson/clock"
	"golang.org/x/term"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // a runtime error
	exitUsage   = 2 // bad arguments, or a config file with errors
)

// defaultDB is the database used without --db or $LITEQUEUE_DB.
const defaultDB = "litequeue.db"

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
	db, config, keyFile string
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

// dispatch parses the global flags and runs the command they precede.
func (c *cli) dispatch(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("litequeue", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.globalFlags(fs)
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		writeOverview(c.stdout)
		return err
	} else if err != nil {
		return &exitError{code: exitUsage, err: err, hint: globalUsage}
	}
	if len(fs.Args()) == 0 {
		writeOverview(c.stderr)
		return &exitError{code: exitUsage}
	}
	cmd, args, err := find(fs.Args())
	if err != nil {
		return err
	}
	return c.runCommand(ctx, cmd, args)
}
