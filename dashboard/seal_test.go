package dashboard_test

import (
	"bytes"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/dashboard"
)

const sealedSecret = "12 Acacia Avenue"

// sealedJob enqueues a job whose payload is sealed with the key k1 on a
// new file, and returns the file's path and the job's ID.
func sealedJob(tb testing.TB) (string, int64) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "sealed.db")
	q := openSealed(tb, path, litequeue.SealKey{ID: "k1", Key: bytes.Repeat([]byte{1}, litequeue.SealKeySize)})
	j, err := q.Enqueue(tb.Context(), "letter", map[string]string{"address": sealedSecret})
	if err != nil {
		tb.Fatal(err)
	}
	return path, j.ID
}

// openSealed opens the file at path with the keys, closed at the end of
// the test.
func openSealed(tb testing.TB, path string, keys ...litequeue.SealKey) *litequeue.Queue {
	tb.Helper()
	q, err := litequeue.Open(path, litequeue.Options{SealKeys: keys})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { q.Close() })
	return q
}

func TestJob_Sealed(t *testing.T) {
	t.Parallel()
	path, id := sealedJob(t)
	withKey := openSealed(t, path, litequeue.SealKey{ID: "k1", Key: bytes.Repeat([]byte{1}, litequeue.SealKeySize)})
	noKey := openSealed(t, path)
	for _, tc := range []struct {
		name   string
		q      *litequeue.Queue
		opts   dashboard.Options
		shown  []string
		hidden bool
	}{
		{"no key", noKey, dashboard.Options{OpenSealed: true}, []string{"(sealed, ", "sealed (key k1)"}, true},
		{"key, not asked to open", withKey, dashboard.Options{}, []string{"(sealed, ", "sealed (key k1)"}, true},
		{"key, asked to open", withKey, dashboard.Options{OpenSealed: true},
			[]string{"(JSON, sealed at rest with key k1, 30 bytes)", sealedSecret}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(dashboard.New(tc.q, tc.opts))
			t.Cleanup(srv.Close)
			_, body := get(t, srv.URL+"/jobs/"+itoa(id))
			contains(t, "the job page", body, tc.shown...)
			if got := strings.Contains(body, sealedSecret); got == tc.hidden {
				t.Errorf("the job page shows the payload: %v, want %v", got, !tc.hidden)
			}
		})
	}
}

func TestBrowser_SealedPayload(t *testing.T) {
	path, id := sealedJob(t)
	srv := httptest.NewServer(dashboard.New(openSealed(t, path), dashboard.Options{OpenSealed: true}))
	t.Cleanup(srv.Close)
	ctx := browser(t)
	visit(t, ctx, "open the job", chromedp.Navigate(srv.URL+"/jobs/"+itoa(id)), chromedp.WaitVisible(chromedp.CSS("pre.payload")))
	if got := read(t, ctx, "read the payload", chromedp.TextContent(chromedp.CSS("pre.payload"))); got != "sealed (key k1)" {
		t.Errorf("payload shown as %q, want %q", got, "sealed (key k1)")
	}
}
