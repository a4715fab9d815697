package pgtest

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A Server is a PostgreSQL server of one test's own, which the test may
// restart or stop without disturbing the tests that share the server of
// LITEQUEUE_TEST_POSTGRES (those of other packages run at the same time).
// It is started and stopped by the repository's .ci/postgres.
type Server struct {
	// DSN is the URL of the server's database "litequeue".
	DSN string
	dir string // the server's dir, which .ci/postgres made
}

// NewServer starts a server in a temp dir of its own (a few seconds: an
// initdb), stopped and removed when the test ends. Like DSN, it skips the
// test without LITEQUEUE_TEST_POSTGRES (the PostgreSQL tests are not asked
// for), and fails it under CI.
func NewServer(tb testing.TB) *Server {
	tb.Helper()
	if os.Getenv(EnvVar) == "" {
		DSN(tb) // skips, or fails under CI
	}
	out, err := osexec.Command(script(), "start").Output()
	if err != nil {
		tb.Fatalf("pgtest: .ci/postgres start: %v\n%s", err, stderr(err))
	}
	s := new(Server)
	for line := range strings.Lines(string(out)) {
		name, value, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "export "), "=")
		switch name {
		case EnvVar:
			s.DSN = unquote(value)
		case "LITEQUEUE_POSTGRES_DIR":
			s.dir = unquote(value)
		}
	}
	if s.DSN == "" || s.dir == "" {
		tb.Fatalf("pgtest: .ci/postgres start printed no DSN or dir:\n%s", out)
	}
	tb.Cleanup(func() { s.Stop(tb) })
	return s
}

// Restart restarts the server as a crash would (pg_ctl restart -m
// immediate), and returns once it accepts connections again.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	if out, err := osexec.Command(script(), "restart", s.dir).CombinedOutput(); err != nil {
		tb.Fatalf("pgtest: .ci/postgres restart: %v\n%s", err, out)
	}
}

// Stop stops the server for good and removes its dir; later calls do
// nothing.
func (s *Server) Stop(tb testing.TB) {
	tb.Helper()
	if out, err := osexec.Command(script(), "stop", s.dir).CombinedOutput(); err != nil {
		tb.Errorf("pgtest: .ci/postgres stop: %v\n%s", err, out)
	}
}

// script is the path of .ci/postgres, found from this file's.
func script() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", ".ci", "postgres")
}

// unquote undoes the quoting of bash's printf %q for the values
// .ci/postgres prints: a backslash before each special character.
func unquote(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func stderr(err error) []byte {
	if ee, ok := err.(*osexec.ExitError); ok {
		return ee.Stderr
	}
	return nil
}
