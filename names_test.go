package litequeue_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litequeue/litequeue"
)

// badNames are names that no kind, queue or schedule may have, each with
// how a refusal shows it and what it says of it.
var badNames = []struct{ name, says string }{
	{"\xff", `"\xff" is not valid UTF-8`},
	{"mail\xe2\x82", `"mail\xe2\x82" is not valid UTF-8`},
	{"mail\n", `"mail\n" holds the control character U+000A at byte 4`},
	{"a\x00b", `"a\x00b" holds the control character U+0000 at byte 1`},
	{"\x7f", `"\x7f" holds the control character U+007F at byte 0`},
	{"ré\u0085", `"ré\u0085" holds the control character U+0085 at byte 3`},
	{strings.Repeat("k", 256), `"` + strings.Repeat("k", 32) + `"… is 256 bytes long`},
}

// nameRule is how each refusal of a name ends: the limit.
const nameRule = " (want 1…255 bytes of UTF-8 without control characters)"

// checkNameError checks that err refuses name as the value of the field,
// with a *FieldError that says what is wrong with it and the limit.
func checkNameError(t *testing.T, call string, err error, field, name, says string) {
	t.Helper()
	var fe *litequeue.FieldError
	switch {
	case err == nil:
		t.Errorf("%s: no error, want %s %s refused", call, field, says)
	case !strings.HasSuffix(err.Error(), ": "+field+" "+says+nameRule):
		t.Errorf("%s:\ngot  %v\nwant …: %s %s%s", call, err, field, says, nameRule)
	case !errors.As(err, &fe) || fe.Field != field || fe.Value != name || fe.Limit != litequeue.NameLimit:
		t.Errorf("%s: %v is not a *FieldError of %s, its value and NameLimit", call, err, field)
	}
}

// TestNames_Refused gives each bad name as a kind and as a queue wherever
// one enters: Enqueue, EnqueueMany and EnqueueTx return an error, as do
// Periodic (also for the schedule's name), Work, PauseQueue and PauseKind;
// Handle panics. Nothing is written.
func TestNames_Refused(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	ctx := t.Context()
	ok := func(ctx context.Context, job *litequeue.Job) error { return nil }
	done, cancel := context.WithCancel(ctx) // Work on it stops at once, if it starts
	cancel()
	for _, bad := range badNames {
		enqueues := map[string]func(kind string, opts ...litequeue.EnqueueOption) error{
			"Enqueue": func(kind string, opts ...litequeue.EnqueueOption) error {
				_, err := q.Enqueue(ctx, kind, nil, opts...)
				return err
			},
			"EnqueueMany": func(kind string, opts ...litequeue.EnqueueOption) error {
				_, err := q.EnqueueMany(ctx, kind, []any{1, 2}, opts...)
				return err
			},
			"EnqueueTx": func(kind string, opts ...litequeue.EnqueueOption) error {
				tx, err := q.DB().BeginTxx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer tx.Rollback()
				_, err = q.EnqueueTx(ctx, tx, kind, nil, opts...)
				if err == nil {
					err = tx.Commit()
				}
				return err
			},
		}
		for call, enqueue := range enqueues {
			checkNameError(t, fmt.Sprintf("%s(%q)", call, bad.name), enqueue(bad.name), "kind", bad.name, bad.says)
			checkNameError(t, fmt.Sprintf("%s with OnQueue(%q)", call, bad.name),
				enqueue("k", litequeue.OnQueue(bad.name)), "queue", bad.name, bad.says)
		}
		checkNameError(t, fmt.Sprintf("Periodic of kind %q", bad.name),
			q.Periodic(ctx, "p", "@hourly", bad.name, nil), "kind", bad.name, bad.says)
		checkNameError(t, fmt.Sprintf("Periodic with OnQueue(%q)", bad.name),
			q.Periodic(ctx, "p", "@hourly", "k", nil, litequeue.PeriodicJob(litequeue.OnQueue(bad.name))), "queue", bad.name, bad.says)
		checkNameError(t, fmt.Sprintf("Periodic named %q", bad.name),
			q.Periodic(ctx, bad.name, "@hourly", "k", nil), "name", bad.name, bad.says)
		checkNameError(t, fmt.Sprintf("Work of queue %q", bad.name),
			q.Work(done, litequeue.WorkerOptions{Queues: []string{"mail", bad.name}}), "queue", bad.name, bad.says)
		checkNameError(t, fmt.Sprintf("PauseQueue(%q)", bad.name), q.PauseQueue(ctx, bad.name), "queue", bad.name, bad.says)
		checkNameError(t, fmt.Sprintf("PauseKind(%q)", bad.name), q.PauseKind(ctx, bad.name), "kind", bad.name, bad.says)

		func() {
			defer func() {
				r := recover()
				if want := "litequeue: Handle: kind " + bad.says + nameRule; fmt.Sprint(r) != want {
					t.Errorf("Handle(%q): panic %v, want %q", bad.name, r, want)
				}
			}()
			q.Handle(bad.name, ok)
		}()
	}
	if n, err := q.Count(ctx, litequeue.Filter{}); err != nil || n != 0 {
		t.Errorf("Count after the refusals: %d, %v; want 0", n, err)
	}
	if ps, err := q.Periodics(ctx); err != nil || len(ps) != 0 {
		t.Errorf("Periodics after the refusals: %v, %v; want none", ps, err)
	}
	if ps, err := q.Paused(ctx); err != nil || len(ps) != 0 {
		t.Errorf("Paused after the refusals: %v, %v; want none", ps, err)
	}
}

// TestNames_Options gives each bad name as a kind of Options.Kinds, to
// Open and in a [kinds] table of litequeue.toml: both refuse it, naming
// the value and the limit, and Open creates no file.
func TestNames_Options(t *testing.T) {
	t.Parallel()
	for _, bad := range badNames {
		path := filepath.Join(t.TempDir(), "queue.db")
		q, err := openBackend(t, path, litequeue.Options{Kinds: map[string]litequeue.KindOptions{bad.name: {MaxRunning: 1}}})
		if err == nil {
			q.Close()
		}
		checkNameError(t, fmt.Sprintf("Open with Kinds[%q]", bad.name), err, "kind", bad.name, bad.says)
		if _, err := os.Stat(path); !onPostgres && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open with Kinds[%q] made %s: %v", bad.name, path, err)
		}
		if !strings.Contains(bad.says, "UTF-8") { // a TOML file is UTF-8
			file := writeConfig(t, fmt.Sprintf("\n[kinds.%s]\nmax_running = 1\n", tomlKey(bad.name)))
			_, err := litequeue.LoadConfig(file)
			checkNameError(t, fmt.Sprintf("LoadConfig of [kinds.%s]", tomlKey(bad.name)), err, "kind", bad.name, bad.says)
			if want := file + ":2: kinds."; err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("LoadConfig of [kinds.%s] = %v, want it on line 2, of the kind's table", tomlKey(bad.name), err)
			}
		}
	}
}

// tomlKey writes s as a quoted TOML key.
func tomlKey(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == '"' || r == '\\' {
			fmt.Fprintf(&b, `\u%04X`, r)
		} else {
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// TestNames_Accepted checks that names at the limit and beyond ASCII are
// names everywhere.
func TestNames_Accepted(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	ctx := t.Context()
	for _, name := range []string{strings.Repeat("k", 255), strings.Repeat("é", 127), "メール", "send email", "a.b-c_d/e:f"} {
		q.Handle(name, func(ctx context.Context, job *litequeue.Job) error { return nil })
		if _, err := q.Enqueue(ctx, name, nil, litequeue.OnQueue(name)); err != nil {
			t.Errorf("Enqueue(%q) on queue %q: %v", name, name, err)
		}
		if err := q.Periodic(ctx, name, "@hourly", name, nil, litequeue.PeriodicJob(litequeue.OnQueue(name))); err != nil {
			t.Errorf("Periodic(%q): %v", name, err)
		}
		if err := q.PauseQueue(ctx, name); err != nil {
			t.Errorf("PauseQueue(%q): %v", name, err)
		}
		if err := q.PauseKind(ctx, name); err != nil {
			t.Errorf("PauseKind(%q): %v", name, err)
		}
	}
}
