package litequeue_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/litequeue/litequeue"
)

// sealKey returns a SealKey of the given ID whose 32 bytes are all b.
func sealKey(id string, b byte) litequeue.SealKey {
	return litequeue.SealKey{ID: id, Key: bytes.Repeat([]byte{b}, litequeue.SealKeySize)}
}

var (
	k1 = sealKey("k1", 1)
	k2 = sealKey("k2", 2)
)

// storedPayload reads the job's payload column as stored, with SQL.
func storedPayload(tb testing.TB, q *litequeue.Queue, id int64) []byte {
	tb.Helper()
	var p []byte
	if err := q.DB().Get(&p, q.DB().Rebind(`SELECT payload FROM litequeue_jobs WHERE id = ?`), id); err != nil {
		tb.Fatalf("read payload of job %d: %v", id, err)
	}
	return p
}

// setStoredPayload writes the job's payload column with SQL.
func setStoredPayload(tb testing.TB, q *litequeue.Queue, id int64, p []byte) {
	tb.Helper()
	if _, err := q.DB().Exec(q.DB().Rebind(`UPDATE litequeue_jobs SET payload = ? WHERE id = ?`), p, id); err != nil {
		tb.Fatalf("write payload of job %d: %v", id, err)
	}
}

// sealedWith fails the test unless j's payload is sealed with key and
// opened as want says.
func sealedWith(tb testing.TB, j *litequeue.Job, key string, opened bool) {
	tb.Helper()
	if id, ok := j.Sealed(); id != key || ok != opened {
		tb.Fatalf("job %d: Sealed() = %q, %v; want %q, %v", j.ID, id, ok, key, opened)
	}
}

// recorder is a handler that records the payloads it is given.
type recorder struct {
	mu  sync.Mutex
	got []string
}

func (r *recorder) handle(ctx context.Context, job *litequeue.Job) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, string(job.Payload))
	return nil
}

func (r *recorder) payloads() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

func TestQueue_Seal_RoundTrip(t *testing.T) {
	t.Parallel()
	var evs events
	q, _ := openQueue(t, litequeue.Options{SealKeys: []litequeue.SealKey{k1}, OnEvent: evs.record})
	var rec recorder
	q.Handle("note", rec.handle)
	ctx := t.Context()

	j := enqueue(t, q, "note", map[string]string{"text": "meet at noon"})
	if got, want := string(j.Payload), `{"text":"meet at noon"}`; got != want {
		t.Fatalf("Enqueue's Payload = %s, want %s", got, want)
	}
	sealedWith(t, j, "k1", true)
	stored := storedPayload(t, q, j.ID)
	if !bytes.HasPrefix(stored, []byte("\xffLQS\x01\x02k1")) || bytes.Contains(stored, []byte("noon")) {
		t.Fatalf("stored payload = %q, want sealed with k1 and no plain text", stored)
	}
	if got := get(t, q, j.ID); string(got.Payload) != string(j.Payload) {
		t.Fatalf("Get's Payload = %s, want %s", got.Payload, j.Payload)
	} else {
		sealedWith(t, got, "k1", true)
	}
	many, err := q.EnqueueMany(ctx, "note", []any{"a", []byte("raw"), nil})
	if err != nil {
		t.Fatal(err)
	}
	listed, err := q.List(ctx, litequeue.Filter{Kind: "note"})
	if err != nil {
		t.Fatal(err)
	}
	var payloads []string
	for _, l := range listed {
		sealedWith(t, l, "k1", true)
		payloads = append(payloads, string(l.Payload))
	}
	want := []string{`{"text":"meet at noon"}`, `"a"`, `raw`, `null`}
	if diff := cmp.Diff(want, payloads); diff != "" {
		t.Fatalf("List's payloads (-want +got):\n%s", diff)
	}
	if n := runDue(t, q); n != 4 {
		t.Fatalf("RunDue ran %d jobs, want 4", n)
	}
	if diff := cmp.Diff(want, rec.payloads()); diff != "" {
		t.Fatalf("the handler's payloads (-want +got):\n%s", diff)
	}
	for _, ev := range evs.list {
		if id, ok := ev.Job.Sealed(); id != "k1" || ok || bytes.Contains(ev.Job.Payload, []byte("noon")) {
			t.Fatalf("%s event of job %d: Sealed() = %q, %v, payload %q; want as stored, sealed with k1", ev.Type, ev.Job.ID, id, ok, ev.Job.Payload)
		}
	}
	if got := get(t, q, many[2].ID).State; got != litequeue.Completed {
		t.Fatalf("job %d is %s, want completed", many[2].ID, got)
	}
}

func TestQueue_Seal_Rotation(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "queue.db")
	clk := newMock()
	reopen := func(keys ...litequeue.SealKey) (*litequeue.Queue, *recorder) {
		q := openAt(t, path, litequeue.Options{Clock: clk, SealKeys: keys})
		rec := &recorder{}
		q.Handle("note", rec.handle)
		return q, rec
	}

	q, _ := reopen(k1)
	old := enqueue(t, q, "note", "sealed with k1")
	q.Close()

	q, _ = reopen(k2, k1)
	sealedWith(t, get(t, q, old.ID), "k1", true)
	newer := enqueue(t, q, "note", "sealed with k2")
	sealedWith(t, newer, "k2", true)
	if got := storedPayload(t, q, newer.ID); !bytes.HasPrefix(got, []byte("\xffLQS\x01\x02k2")) {
		t.Fatalf("stored payload of the new job = %q, want sealed with k2", got)
	}
	q.Close()

	q, rec := reopen(k2)
	j := get(t, q, old.ID)
	sealedWith(t, j, "k1", false)
	if !bytes.Equal(j.Payload, storedPayload(t, q, old.ID)) {
		t.Fatalf("Get's Payload of a job that does not open = %q, want it as stored", j.Payload)
	}
	if n := runDue(t, q); n != 2 {
		t.Fatalf("RunDue ran %d jobs, want 2", n)
	}
	if diff := cmp.Diff([]string{`"sealed with k2"`}, rec.payloads()); diff != "" {
		t.Fatalf("the handler's payloads (-want +got):\n%s", diff)
	}
	diedSealed(t, q, old.ID, `payload sealed with key "k1" does not open: no key with that ID (the Queue's SealKeys are "k2")`)
	q.Close()

	// Given its key again, the dead job runs once replayed.
	q, rec = reopen(k2, k1)
	if err := q.Replay(t.Context(), old.ID); err != nil {
		t.Fatal(err)
	}
	if n := runDue(t, q); n != 1 {
		t.Fatalf("RunDue ran %d jobs, want 1", n)
	}
	if diff := cmp.Diff([]string{`"sealed with k1"`}, rec.payloads()); diff != "" {
		t.Fatalf("the handler's payloads after the replay (-want +got):\n%s", diff)
	}
}

// diedSealed fails the test unless job id is dead after one run that
// failed with the ErrorClass "sealed" and the error text want.
func diedSealed(tb testing.TB, q *litequeue.Queue, id int64, want string) {
	tb.Helper()
	j := get(tb, q, id)
	h := history(tb, q, id)
	if j.State != litequeue.Dead || len(h) != 1 {
		tb.Fatalf("job %d is %s after %d runs, want dead after 1", id, j.State, len(h))
	}
	if h[0].ErrorClass != "sealed" || h[0].Error != "litequeue: "+want || j.LastError != h[0].Error {
		tb.Fatalf("job %d: run failed with class %q, error %q, LastError %q; want class sealed, error %q",
			id, h[0].ErrorClass, h[0].Error, j.LastError, "litequeue: "+want)
	}
}

func TestQueue_Seal_DoesNotOpen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(tb testing.TB, q *litequeue.Queue, j, other *litequeue.Job) // other: a job of kind "other"
		key    string                                                           // the key the header names
		want   string
	}{
		{"flipped byte", func(tb testing.TB, q *litequeue.Queue, j, _ *litequeue.Job) {
			p := storedPayload(tb, q, j.ID)
			p[len(p)-20] ^= 1
			setStoredPayload(tb, q, j.ID, p)
		}, "k1", `payload sealed with key "k1" does not open: wrong key, or bytes changed since it was sealed`},
		{"cut short", func(tb testing.TB, q *litequeue.Queue, j, _ *litequeue.Job) {
			setStoredPayload(tb, q, j.ID, storedPayload(tb, q, j.ID)[:20])
		}, "", `payload does not open: sealed payload of 20 bytes is cut short`},
		{"unknown version", func(tb testing.TB, q *litequeue.Queue, j, _ *litequeue.Job) {
			p := storedPayload(tb, q, j.ID)
			p[4] = 9
			setStoredPayload(tb, q, j.ID, p)
		}, "", `payload does not open: sealed payload of version 9: this litequeue opens version 1`},
		{"copied from another kind", func(tb testing.TB, q *litequeue.Queue, j, other *litequeue.Job) {
			setStoredPayload(tb, q, j.ID, storedPayload(tb, q, other.ID))
		}, "k1", `payload sealed with key "k1" does not open: wrong key, or bytes changed since it was sealed`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q, _ := openQueue(t, litequeue.Options{SealKeys: []litequeue.SealKey{k1}})
			var rec recorder
			q.Handle("note", rec.handle)
			j := enqueue(t, q, "note", "secret")
			other := enqueue(t, q, "other", "another secret") // no handler: it waits
			tc.change(t, q, j, other)
			sealedWith(t, get(t, q, j.ID), tc.key, false)
			if n := runDue(t, q); n != 1 {
				t.Fatalf("RunDue ran %d jobs, want 1", n)
			}
			if got := rec.payloads(); len(got) != 0 {
				t.Fatalf("the handler got %q, want nothing", got)
			}
			diedSealed(t, q, j.ID, tc.want)
		})
	}
}

func TestQueue_Seal_SameKindOpens(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{SealKeys: []litequeue.SealKey{k1}})
	a := enqueue(t, q, "note", "a")
	b := enqueue(t, q, "note", "b")
	setStoredPayload(t, q, a.ID, storedPayload(t, q, b.ID))
	if got := get(t, q, a.ID); string(got.Payload) != `"b"` {
		t.Fatalf("job %d's payload = %s, want %q: the job's ID is not bound", a.ID, got.Payload, `"b"`)
	}
}

func TestQueue_Seal_NoKeys(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "queue.db")
	clk := newMock()
	q := openAt(t, path, litequeue.Options{Clock: clk, SealKeys: []litequeue.SealKey{k1}})
	j := enqueue(t, q, "note", "secret")
	q.Close()

	q = openAt(t, path, litequeue.Options{Clock: clk})
	var rec recorder
	q.Handle("note", rec.handle)
	sealedWith(t, get(t, q, j.ID), "k1", false)
	if n := runDue(t, q); n != 1 {
		t.Fatalf("RunDue ran %d jobs, want 1", n)
	}
	if len(rec.payloads()) != 0 {
		t.Fatalf("the handler got %q, want nothing", rec.payloads())
	}
	diedSealed(t, q, j.ID, `payload sealed with key "k1" does not open: no key with that ID (the Queue has no SealKeys)`)

	// A payload of a Queue without keys is stored as given.
	later := enqueue(t, q, "note", []byte(`{"plain":true}`))
	if got := storedPayload(t, q, later.ID); string(got) != `{"plain":true}` {
		t.Fatalf("stored payload = %q, want it as given", got)
	}
	sealedWith(t, later, "", false)
}

func TestOpen_SealKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		keys []litequeue.SealKey
		want string
	}{
		{"short key", []litequeue.SealKey{k1, {ID: "k2", Key: make([]byte, 16)}},
			`seal key 1 ("k2"): key of 16 bytes, want 32 bytes (AES-256)`},
		{"empty ID", []litequeue.SealKey{{Key: k1.Key}}, `seal key 0: empty ID`},
		{"long ID", []litequeue.SealKey{{ID: strings.Repeat("k", 65), Key: k1.Key}},
			`seal key 0: ID of 65 bytes is over the limit of 64 bytes`},
		{"colon", []litequeue.SealKey{{ID: "k:1", Key: k1.Key}},
			`seal key 0: ID "k:1" holds ':': want ASCII letters, digits, '-', '_' and '.'`},
		{"twice", []litequeue.SealKey{k1, k2, sealKey("k1", 3)},
			`seal key 2: ID "k1" is also the ID of key 0: IDs must be unique`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "queue.db")
			q, err := litequeue.Open(path, litequeue.Options{SealKeys: tc.keys})
			if err == nil {
				q.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open: %v\nwant it to say: %s", err, tc.want)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("Open refused, yet the file is there: %v", err)
			}
		})
	}
}

func TestOpen_SealKeysCopied(t *testing.T) {
	t.Parallel()
	keys := []litequeue.SealKey{sealKey("k1", 1)}
	q, _ := openQueue(t, litequeue.Options{SealKeys: keys})
	j := enqueue(t, q, "note", "secret")
	keys[0].Key[0] ^= 1
	keys[0].ID = "k9"
	if got := get(t, q, j.ID); string(got.Payload) != `"secret"` {
		t.Fatalf("payload = %q after the caller changed its keys, want %q", got.Payload, `"secret"`)
	}
}

// canary is the plain text the raw-bytes tests look for.
const canary = "canary-7f3a-plaintext-payload"

// rawHas reports which of the files at paths hold the canary.
func rawHas(tb testing.TB, paths ...string) []string {
	tb.Helper()
	var found []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			tb.Fatal(err)
		}
		if bytes.Contains(b, []byte(canary)) {
			found = append(found, filepath.Base(p))
		}
	}
	return found
}

func TestQueue_Seal_RawBytes(t *testing.T) {
	fileOnly(t, "reads the bytes of the file and its WAL")
	t.Parallel()
	for _, tc := range []struct {
		name       string
		keys       []litequeue.SealKey
		want       []string // the files that hold the canary, on the way
		wantClosed []string // and once the Queue is closed
	}{
		// Without keys the canary is found: the test can fail.
		{"no keys", nil, []string{"queue.db-wal", "queue.db", "backup.db"}, []string{"queue.db", "backup.db"}},
		{"sealed", []litequeue.SealKey{k1}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q, path := openQueue(t, litequeue.Options{SealKeys: tc.keys, Checkpoint: "off"})
			ctx := t.Context()
			payloads := make([]any, 200)
			for i := range payloads {
				payloads[i] = map[string]any{"secret": canary, "n": i}
			}
			if _, err := q.EnqueueMany(ctx, "note", payloads); err != nil {
				t.Fatal(err)
			}
			enqueue(t, q, "note", []byte(canary), litequeue.Metadata("note", "metadata is not sealed"))
			var found []string
			found = append(found, rawHas(t, path+"-wal")...)
			if _, err := q.DB().ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
				t.Fatal(err)
			}
			found = append(found, rawHas(t, path, path+"-wal")...)
			backup := filepath.Join(filepath.Dir(path), "backup.db")
			if err := q.Backup(ctx, backup, litequeue.BackupOptions{}); err != nil {
				t.Fatal(err)
			}
			found = append(found, rawHas(t, backup, backup+"-wal")...)
			if err := q.Close(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantClosed, rawHas(t, path, path+"-wal", backup)); diff != "" {
				t.Fatalf("after Close, files with the canary (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, found); diff != "" {
				t.Fatalf("files with the canary (-want +got):\n%s", diff)
			}
			if b, _ := os.ReadFile(path); !bytes.Contains(b, []byte("metadata is not sealed")) {
				t.Fatal("the file lacks the metadata in plain text: the search is blind")
			}
		})
	}
}

func TestCopy_Sealed(t *testing.T) {
	t.Parallel()
	keys := []litequeue.SealKey{k1}
	from, _ := openQueue(t, litequeue.Options{SealKeys: keys})
	j := enqueue(t, from, "note", map[string]int{"n": 7}, litequeue.OnQueue("mail"))
	to, _ := openQueue(t, litequeue.Options{SealKeys: keys})
	if _, err := litequeue.Copy(t.Context(), from, to); err != nil {
		t.Fatal(err)
	}
	copied, err := to.List(t.Context(), litequeue.Filter{})
	if err != nil || len(copied) != 1 {
		t.Fatalf("List = %d jobs, %v; want 1", len(copied), err)
	}
	if !bytes.Equal(storedPayload(t, to, copied[0].ID), storedPayload(t, from, j.ID)) {
		t.Fatal("the copy's stored payload differs from the original's: Copy copies sealed payloads as they are")
	}
	var got map[string]int
	if err := json.Unmarshal(copied[0].Payload, &got); err != nil || got["n"] != 7 {
		t.Fatalf("the copy's payload = %s (%v), want it opened", copied[0].Payload, err)
	}
	sealedWith(t, copied[0], "k1", true)
}

// TestQueue_Seal_EveryWay: EnqueueTx and a periodic slot store their
// payloads sealed too.
func TestQueue_Seal_EveryWay(t *testing.T) {
	t.Parallel()
	clk := newMock()
	q, _ := openQueue(t, litequeue.Options{Clock: clk, SealKeys: []litequeue.SealKey{k1}})
	var rec recorder
	q.Handle("note", rec.handle)
	ctx := t.Context()
	tx, err := q.DB().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	inTx, err := q.EnqueueTx(ctx, tx, "note", "in a transaction")
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := q.Periodic(ctx, "hourly", "@every 1h", "note", "on the hour"); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Hour)
	if n := runDue(t, q); n != 2 {
		t.Fatalf("RunDue ran %d jobs, want 2", n)
	}
	jobs, err := q.List(ctx, litequeue.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if p := storedPayload(t, q, j.ID); !bytes.HasPrefix(p, []byte("\xffLQS\x01\x02k1")) || bytes.Contains(p, j.Payload) {
			t.Errorf("job %d (%s) is stored as %q, want it sealed with k1", j.ID, j.Payload, p)
		}
	}
	sealedWith(t, inTx, "k1", true)
	if diff := cmp.Diff([]string{`"in a transaction"`, `"on the hour"`}, rec.payloads()); diff != "" {
		t.Fatalf("the handler's payloads (-want +got):\n%s", diff)
	}
}

// TestQueue_Seal_Work: under Work, with several runs at once, the jobs
// whose payload was changed in the file die without reaching the
// handler, and the others run.
func TestQueue_Seal_Work(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{SealKeys: []litequeue.SealKey{k1}})
	var rec recorder
	q.Handle("note", rec.handle)
	ctx := t.Context()
	payloads := make([]any, 12)
	for i := range payloads {
		payloads[i] = i
	}
	jobs, err := q.EnqueueMany(ctx, "note", payloads)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i, j := range jobs {
		if i%3 != 0 {
			want = append(want, strconv.Itoa(i))
			continue
		}
		p := storedPayload(t, q, j.ID)
		p[len(p)-1] ^= 0x80
		setStoredPayload(t, q, j.ID, p)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- q.Work(wctx, litequeue.WorkerOptions{Concurrency: 4}) }()
	waitFor(t, "every job to finish", func() bool {
		n, err := q.Count(ctx, litequeue.Filter{State: litequeue.Pending})
		m, err2 := q.Count(ctx, litequeue.Filter{State: litequeue.Running})
		return err == nil && err2 == nil && n+m == 0
	})
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := rec.payloads()
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("the handler's payloads (-want +got):\n%s", diff)
	}
	for i := 0; i < len(jobs); i += 3 {
		diedSealed(t, q, jobs[i].ID, `payload sealed with key "k1" does not open: wrong key, or bytes changed since it was sealed`)
	}
}

// TestQueue_Seal_Before: a payload stored before the keys were set is
// read, and run, as stored.
func TestQueue_Seal_Before(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "queue.db")
	clk := newMock()
	q := openAt(t, path, litequeue.Options{Clock: clk})
	j := enqueue(t, q, "note", "from before")
	q.Close()

	q = openAt(t, path, litequeue.Options{Clock: clk, SealKeys: []litequeue.SealKey{k1}})
	var rec recorder
	q.Handle("note", rec.handle)
	got := get(t, q, j.ID)
	sealedWith(t, got, "", false)
	if n := runDue(t, q); n != 1 || string(got.Payload) != `"from before"` {
		t.Fatalf("RunDue ran %d jobs, Get's payload %s; want 1, %q", n, got.Payload, `"from before"`)
	}
	if diff := cmp.Diff([]string{`"from before"`}, rec.payloads()); diff != "" {
		t.Fatalf("the handler's payloads (-want +got):\n%s", diff)
	}
}
