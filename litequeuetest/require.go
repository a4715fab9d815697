package litequeuetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// A Match is one condition on a job, for RequireEnqueued,
// RequireNotEnqueued and Enqueued. A job matches a list of them when it
// meets every one; the empty list matches every job of the kind.
type Match struct {
	what string // the condition, as failure messages name it
	ok   func(*litequeue.Job) bool
	err  error // a condition that cannot be checked, such as a payload that does not encode
}

// Where is a condition of the caller's own: ok reports whether a job meets
// it, and what names it in failure messages, after "with" ("a trace ID"
// reads: no job of kind "email" with a trace ID).
func Where(what string, ok func(*litequeue.Job) bool) Match {
	return Match{what: what, ok: ok}
}

// InQueue matches the jobs of the named queue.
func InQueue(name string) Match {
	return Where(fmt.Sprintf("queue %q", name), func(j *litequeue.Job) bool { return j.Queue == name })
}

// InState matches the jobs in state s. Without it, a job in any state
// matches: one that Drain has completed was enqueued all the same.
func InState(s litequeue.State) Match {
	return Where("state "+string(s), func(j *litequeue.Job) bool { return j.State == s })
}

// Priority matches the jobs of priority p.
func Priority(p int) Match {
	return Where(fmt.Sprintf("priority %d", p), func(j *litequeue.Job) bool { return j.Priority == p })
}

// RunAt matches the jobs due at t (to the millisecond, as litequeue
// stores it). A job's RunAt is zero once it has completed.
func RunAt(t time.Time) Match {
	t = t.Truncate(time.Millisecond)
	return Where("run at "+t.Format(time.RFC3339Nano), func(j *litequeue.Job) bool { return j.RunAt.Equal(t) })
}

// UniqueKey matches the jobs enqueued with litequeue.UniqueKey(key).
func UniqueKey(key string) Match {
	return Where(fmt.Sprintf("unique key %q", key), func(j *litequeue.Job) bool { return j.UniqueKey == key })
}

// Payload matches the jobs whose payload is the same JSON value as v
// encodes to: objects compare key by key, whatever the order and spacing
// of the stored text, and numbers by their digits. A []byte or
// json.RawMessage v is taken as JSON text, as Enqueue stores it; if it is
// not JSON (or is empty), it matches a payload of the same bytes. A v that
// does not encode to JSON fails the test that uses the Match.
func Payload(v any) Match {
	text, err := encode(v)
	if err != nil {
		return Match{what: "payload", err: fmt.Errorf("payload %#v: %w", v, err)}
	}
	want, err := decodeJSON(text)
	if err != nil {
		// Not JSON: bytes the app stores as they are.
		return Where(fmt.Sprintf("payload %q", clip(string(text))), func(j *litequeue.Job) bool { return bytes.Equal(j.Payload, text) })
	}
	return Where("payload "+clip(string(text)), func(j *litequeue.Job) bool {
		got, err := decodeJSON(j.Payload)
		return err == nil && reflect.DeepEqual(got, want)
	})
}

// encode returns the payload that Enqueue stores for v: v itself if it is
// a []byte or a json.RawMessage, else its JSON.
func encode(v any) ([]byte, error) {
	switch p := v.(type) {
	case json.RawMessage:
		return p, nil
	case []byte:
		return p, nil
	}
	return json.Marshal(v)
}

// Args matches the jobs of kind whose payload, read with [litequeue.Kind.Args],
// is args as a job of the kind would carry it: args is encoded as Enqueue
// encodes it and read back with Kind.Args, and the two values of T are
// compared with go-cmp's cmp.Equal. So what the payload does not carry
// (unexported fields, a time's monotonic reading) is not compared, and a
// type with an Equal method, such as time.Time, is compared with it. A
// job of another kind, or whose payload does not decode as T, does not
// match. An args that does not encode, or does not decode back, fails the
// test that uses the Match.
func Args[T any](kind litequeue.Kind[T], args T) Match {
	text, err := encode(args)
	if err != nil {
		return Match{what: "args", err: fmt.Errorf("args %#v of kind %q: %w", args, kind.Name(), err)}
	}
	want, err := kind.Args(&litequeue.Job{Kind: kind.Name(), Payload: text})
	if err != nil {
		return Match{what: "args", err: fmt.Errorf("args %#v do not read back: %w", args, err)}
	}
	// Values read back have the unexported fields of a new value on both
	// sides: compare them rather than panic on them.
	readBack := cmp.Exporter(func(reflect.Type) bool { return true })
	return Where("args "+clip(string(text)), func(j *litequeue.Job) bool {
		got, err := kind.Args(j)
		return err == nil && cmp.Equal(want, got, readBack)
	})
}

// RequireEnqueuedKind is [RequireEnqueued] for a typed kind: it returns
// the one job of kind whose payload is args (see [Args]) and that meets
// every match, failing the test with tb.Fatalf if there is none or more
// than one.
func RequireEnqueuedKind[T any](tb testing.TB, q *litequeue.Queue, kind litequeue.Kind[T], args T, matches ...Match) *litequeue.Job {
	tb.Helper()
	return RequireEnqueued(tb, q, kind.Name(), append([]Match{Args(kind, args)}, matches...)...)
}

// decodeJSON decodes one JSON value, its numbers kept as their text.
func decodeJSON(text []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(text))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("more than one JSON value in %s", clip(string(text)))
	}
	return v, nil
}

// RequireEnqueued returns the one job of the kind, in any state, that
// meets every match, failing the test with tb.Fatalf if there is none or
// more than one. The message lists the jobs of the kind (or, if there are
// none, the kinds there are), so that a wrong payload or a misspelt kind
// shows at once. It reads the jobs with Queue.List, so jobs that
// retention has purged are gone.
func RequireEnqueued(tb testing.TB, q *litequeue.Queue, kind string, matches ...Match) *litequeue.Job {
	tb.Helper()
	jobs, found, ok := find(tb, q, kind, matches)
	if !ok {
		return nil
	}
	switch len(found) {
	case 1:
		return found[0]
	case 0:
		if len(jobs) == 0 {
			tb.Fatalf("litequeuetest: no job of kind %q was enqueued; %s", kind, otherKinds(tb, q))
			return nil
		}
		tb.Fatalf("litequeuetest: no job of kind %q%s; the jobs of that kind:%s", kind, conditions(matches), list(jobs))
	default:
		tb.Fatalf("litequeuetest: %d jobs of kind %q%s, want one:%s", len(found), kind, conditions(matches), list(found))
	}
	return nil
}

// RequireNotEnqueued fails the test with tb.Fatalf, listing them, if any
// job of the kind meets every match; with no match, if there is any job of
// the kind at all.
func RequireNotEnqueued(tb testing.TB, q *litequeue.Queue, kind string, matches ...Match) {
	tb.Helper()
	_, found, ok := find(tb, q, kind, matches)
	if ok && len(found) > 0 {
		tb.Fatalf("litequeuetest: want no job of kind %q%s, found %d:%s", kind, conditions(matches), len(found), list(found))
	}
}

// Enqueued returns the jobs of the kind, in any state, that meet every
// match, ordered by ID: for counts and for checks of the caller's own. It
// fails the test only if a match cannot be checked or the jobs cannot be
// read.
func Enqueued(tb testing.TB, q *litequeue.Queue, kind string, matches ...Match) []*litequeue.Job {
	tb.Helper()
	_, found, _ := find(tb, q, kind, matches)
	return found
}

// find lists the jobs of the kind and those of them that meet every match.
// It fails the test and reports !ok if it cannot.
func find(tb testing.TB, q *litequeue.Queue, kind string, matches []Match) (jobs, found []*litequeue.Job, ok bool) {
	tb.Helper()
	for _, m := range matches {
		if m.err != nil {
			tb.Fatalf("litequeuetest: %v", m.err)
			return nil, nil, false
		}
	}
	jobs, err := q.List(tb.Context(), litequeue.Filter{Kind: kind})
	if err != nil {
		tb.Fatalf("litequeuetest: list jobs of kind %q: %v", kind, err)
		return nil, nil, false
	}
	for _, j := range jobs {
		if slices.ContainsFunc(matches, func(m Match) bool { return !m.ok(j) }) {
			continue
		}
		found = append(found, j)
	}
	return jobs, found, true
}

// conditions names the matches for a failure message: ` with queue "mail"
// and priority 2`, or "" for none.
func conditions(matches []Match) string {
	if len(matches) == 0 {
		return ""
	}
	names := make([]string, len(matches))
	for i, m := range matches {
		names[i] = m.what
	}
	return " with " + strings.Join(names, " and ")
}

// list is one line per job, at most maxListed of them, each after a
// newline and a tab.
func list(jobs []*litequeue.Job) string {
	var b strings.Builder
	for i, j := range jobs {
		if i == maxListed {
			fmt.Fprintf(&b, "\n\t… and %d more", len(jobs)-maxListed)
			break
		}
		b.WriteString("\n\t" + describe(j, time.Time{}))
	}
	return b.String()
}

// otherKinds names the kinds of the jobs in q, with their counts, for the
// message of a kind that has no job: a misspelt kind shows beside the
// right one.
func otherKinds(tb testing.TB, q *litequeue.Queue) string {
	tb.Helper()
	jobs, err := q.List(tb.Context(), litequeue.Filter{})
	if err != nil {
		return fmt.Sprintf("(list jobs: %v)", err)
	}
	if len(jobs) == 0 {
		return "the queue has no jobs"
	}
	counts := map[string]int{}
	for _, j := range jobs {
		counts[j.Kind]++
	}
	kinds := make([]string, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for i, k := range kinds {
		kinds[i] = fmt.Sprintf("%q (%d)", k, counts[k])
	}
	return "the kinds there are: " + strings.Join(kinds, ", ")
}
