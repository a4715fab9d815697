package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestEngine_Health checks the report on a sound file: integrity ok,
// litequeue's schema version and application_id, WAL, its size; and on
// the same file read-only.
func TestEngine_Health(t *testing.T) {
	t.Parallel()
	e := openTemp(t, Config{})
	for name, eng := range map[string]*Engine{"writer": e, "read-only": openReadOnly(t, e.path)} {
		h, err := eng.Health(t.Context())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(h.Integrity, []string{"ok"}) || h.SchemaVersion != schemaVersion || h.ApplicationID != applicationID ||
			h.JournalMode != "wal" || h.Backup || h.FileBytes == 0 {
			t.Errorf("%s: %+v", name, h)
		}
		if len(h.ReadProblems)+len(h.FileProblems)+len(h.Warnings) != 0 || h.Explain != "" {
			t.Errorf("%s: problems %q and %q, warnings %q, explanation %q; want none", name, h.ReadProblems, h.FileProblems, h.Warnings, h.Explain)
		}
	}
}

// TestEngine_HealthFindings: a file of another application is a problem
// of the reads; a file that other users may read, a warning that says
// how to fix it, with its path quoted for a shell.
func TestEngine_HealthFindings(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "it's here.db")
	e, err := Open(path, Config{Schema: testSchema(t), Synchronous: "full", ReadPool: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Info().Writes.Exec(`PRAGMA application_id = 7`); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h, err := e.Health(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"application_id 0x7 is not litequeue's"}; !slices.Equal(h.ReadProblems, want) {
		t.Errorf("problems %q, want %q", h.ReadProblems, want)
	}
	if runtime.GOOS == "windows" {
		return
	}
	want := fmt.Sprintf("%s has mode 0644: users other than its owner can read it, and the payloads in it may be personal data: chmod 600 %s",
		path, `'`+strings.ReplaceAll(path, `'`, `'\''`)+`'`)
	if !slices.Equal(h.Warnings, []string{want}) {
		t.Errorf("warnings %q, want %q", h.Warnings, want)
	}
}

// codeError is an error with SQLite's result code, as the driver's.
type codeError int

func (c codeError) Error() string { return fmt.Sprintf("code %d", int(c)) }
func (c codeError) Code() int     { return int(c) }

// TestExplainShortRead: SQLite's SQLITE_IOERR_SHORT_READ, wrapped or
// not, is explained; any other error is not.
func TestExplainShortRead(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err  error
		want string
	}{
		{codeError(sqliteShortRead), walCutShort},
		{fmt.Errorf("read: %w", codeError(sqliteShortRead)), walCutShort},
		{codeError(10), ""}, // SQLITE_IOERR
		{errors.New("disk I/O error (522)"), ""},
		{nil, ""},
	} {
		if got := ExplainShortRead(tt.err); got != tt.want {
			t.Errorf("ExplainShortRead(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// TestShellQuote: a path of plain characters stays as it is; any other is
// quoted, with its single quotes escaped.
func TestShellQuote(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]string{
		"/var/lib/app/q.db":  "/var/lib/app/q.db",
		"/data/a b.db":       `'/data/a b.db'`,
		"/data/it's.db":      `'/data/it'\''s.db'`,
		"/data/$HOME/q.db":   `'/data/$HOME/q.db'`,
		"":                   `''`,
		"C:/queue,v2@host=1": "C:/queue,v2@host=1",
	} {
		if got := shellQuote(path); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", path, got, want)
		}
	}
}
