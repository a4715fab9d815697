package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/litequeue/litequeue/internal/pgtest"
)

// copyReport matches what copy prints, and takes out the jobs it copied
// and skipped.
var copyReport = regexp.MustCompile(`^copied (\d+) jobs, \d+ history rows and \d+ keys from \S+ to \S+; skipped (\d+) jobs copied before\n$`)

// copyTwice runs copy from the database from into to twice, and checks
// that the first copies every job it copies, and the second skips them
// all and copies none. It returns how many.
func copyTwice(t *testing.T, fx *fixture, from, to string) int {
	t.Helper()
	var copied int
	for i, want := range []string{"first", "second"} {
		c := fx.cli("")
		c.db = from
		r := mustRun(t, c, "copy", "--to", to)
		m := copyReport.FindStringSubmatch(r.stdout)
		if m == nil {
			t.Fatalf("%s copy printed %q", want, r.stdout)
		}
		jobs, _ := strconv.Atoi(m[1])
		skipped, _ := strconv.Atoi(m[2])
		if i == 0 {
			copied = jobs
			if jobs == 0 || skipped != 0 {
				t.Fatalf("first copy printed %q: want jobs copied, none skipped", r.stdout)
			}
		} else if jobs != 0 || skipped != copied {
			t.Fatalf("second copy printed %q: want 0 jobs copied, %d skipped", r.stdout, copied)
		}
	}
	return copied
}

// TestCopy_Twice copies the fixture's file twice into another file, and,
// with a server, onto it and from it into a file: the second copy of each
// skips every job and says so.
func TestCopy_Twice(t *testing.T) {
	fx := newFixture(t)
	t.Run("file to file", func(t *testing.T) {
		copyTwice(t, fx, fx.path, filepath.Join(t.TempDir(), "to.db"))
	})
	t.Run("file to server and back", func(t *testing.T) {
		dsn := pgtest.DSN(t)
		n := copyTwice(t, fx, fx.path, dsn)
		if back := copyTwice(t, fx, dsn, filepath.Join(t.TempDir(), "back.db")); back != n {
			t.Errorf("copied %d jobs back from the server, want the %d copied there", back, n)
		}
	})
}
