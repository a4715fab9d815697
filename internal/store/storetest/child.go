package storetest

import (
	"bufio"
	"database/sql"
	"io"
	"os"
	"os/exec"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"github.com/litequeue/litequeue/internal/backend"
	"github.com/litequeue/litequeue/internal/store/postgres"
)

// A Child is the test binary run again as a child process, to run one
// test of its own (which opens a database, say, and prints "opened"),
// and to be killed.
type Child struct {
	cmd    *exec.Cmd
	opened chan struct{}
}

// StartChild runs the test binary again with -test.run=^test$ and the
// environment variable env set to value, its stderr the test's. The child
// is killed, if it still runs, at the end of the test.
func StartChild(tb testing.TB, test, env, value string) *Child {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"="+value)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	c := &Child{cmd: cmd, opened: make(chan struct{})}
	tb.Cleanup(func() { c.Kill() })
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			if s.Text() == "opened" {
				close(c.opened)
				break
			}
		}
		io.Copy(io.Discard, out)
	}()
	return c
}

// Opened reports whether the child has printed the line "opened".
func (c *Child) Opened() bool {
	select {
	case <-c.opened:
		return true
	default:
		return false
	}
}

// Kill SIGKILLs the child and waits for it to end.
func (c *Child) Kill() {
	c.cmd.Process.Kill()
	c.cmd.Wait()
}

// OpenServer opens an engine on the PostgreSQL database at dsn, and
// closes it and its pool when the test ends.
func OpenServer(tb testing.TB, dsn string) *postgres.Engine {
	tb.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	eng, err := postgres.Open(tb.Context(), backend.Postgres{DB: db}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { eng.Close() })
	return eng
}
