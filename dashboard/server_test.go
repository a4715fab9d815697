package dashboard

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litequeue/litequeue"
)

// TestHandler_PanicIsAPlain500 panics in a page: the browser gets a plain
// 500 without the panic's value or a stack trace; the log has the value.
func TestHandler_PanicIsAPlain500(t *testing.T) {
	q, err := litequeue.Open(filepath.Join(t.TempDir(), "q.db"), litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var log bytes.Buffer
	h := newHandler(q, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	h.mux.HandleFunc("GET /boom", func(http.ResponseWriter, *http.Request) { panic("secret: /etc/app.conf") })
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost/boom", nil))
	body := rec.Body.String()
	if rec.Code != http.StatusInternalServerError || strings.Contains(body, "secret") || strings.Contains(body, "goroutine") {
		t.Errorf("a page that panics answers %d %q, want a plain 500", rec.Code, body)
	}
	if !strings.Contains(log.String(), "secret: /etc/app.conf") {
		t.Errorf("the log does not have the panic: %q", log.String())
	}
}

// TestServe_Timeouts checks that the server of Serve cuts off slow
// clients: every timeout is set, and the header size is bounded.
func TestServe_Timeouts(t *testing.T) {
	srv := newServer(http.NotFoundHandler())
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.WriteTimeout <= 0 || srv.IdleTimeout <= 0 {
		t.Errorf("server timeouts: read header %v, read %v, write %v, idle %v; want each set",
			srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout)
	}
	if srv.MaxHeaderBytes <= 0 || srv.MaxHeaderBytes > 64<<10 {
		t.Errorf("MaxHeaderBytes %d, want a bound of at most 64 KiB", srv.MaxHeaderBytes)
	}
}
