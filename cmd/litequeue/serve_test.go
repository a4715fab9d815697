package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a strings.Builder that the command's goroutine writes
// while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// served is a "serve" command running on a goroutine.
type served struct {
	base   string        // the URL it says it serves, ending in /
	stderr *lockedBuffer // what it wrote on stderr so far
	stop   func() int    // interrupts it and returns its exit status
}

// startServe runs "serve" with args on c and waits until it says where it
// listens. The test fails if it exits first; it is stopped at the end of
// the test if the test did not stop it.
func startServe(t *testing.T, c *cli, args ...string) *served {
	t.Helper()
	s := &served{stderr: &lockedBuffer{}}
	c.stdout, c.stderr = io.Discard, s.stderr
	ctx, interrupt := context.WithCancel(t.Context())
	exited := make(chan struct{})
	var code int
	go func() {
		defer close(exited)
		code = c.run(ctx, append([]string{"serve"}, args...))
	}()
	s.stop = func() int {
		interrupt()
		select {
		case <-exited:
			return code
		case <-time.After(10 * time.Second):
			t.Fatal("serve did not return after the interrupt")
			return -1
		}
	}
	t.Cleanup(func() { s.stop() })

	addrRE := regexp.MustCompile(`serving (http://[^/]+/)`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m := addrRE.FindStringSubmatch(s.stderr.String()); m != nil {
			s.base = m[1]
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve never said where it listens; stderr:\n%s", s.stderr.String())
		}
		select {
		case <-exited:
			t.Fatalf("serve exited %d before serving; stderr:\n%s", code, s.stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// fetch sends one request to the served dashboard, through the Host host
// if it is set, and returns its status and body.
func (s *served) fetch(t *testing.T, method, path, host string, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.base+strings.TrimPrefix(path, "/"), body)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestServe runs "serve" on the fixture's file: it says where it listens,
// serves the overview read-only, refuses a write, and exits 0 once
// interrupted.
func TestServe(t *testing.T) {
	fx := newFixture(t)
	s := startServe(t, fx.cli(""), "--addr", "127.0.0.1:0")
	if code, body := s.fetch(t, http.MethodGet, "/", "", nil); code != http.StatusOK || !strings.Contains(body, "Overview") {
		t.Fatalf("GET / = %d, body without the overview:\n%.300s", code, body)
	}
	code, body := s.fetch(t, http.MethodPost, "/dead/replay", "", strings.NewReader("id=1"))
	if code != http.StatusForbidden || !strings.Contains(body, "read-only") {
		t.Fatalf("a write without --allow-writes answered %d %q, want 403, read-only", code, body)
	}
	if code := s.stop(); code != exitOK {
		t.Fatalf("serve exited %d after the interrupt, want 0; stderr:\n%s", code, s.stderr.String())
	}
}

// TestServe_AnswersOnlyItsHosts: without a token, serve answers a Host of
// loopback and those of --allow-host; a page on a rebound name gets 421.
func TestServe_AnswersOnlyItsHosts(t *testing.T) {
	fx := newFixture(t)
	s := startServe(t, fx.cli(""), "--addr", "127.0.0.1:0", "--allow-host", "queue.example.com", "--allow-host", "ops.example.com:8443")
	for host, want := range map[string]int{
		"rebind.attacker.example": http.StatusMisdirectedRequest,
		"queue.example.com":       http.StatusOK,
		"ops.example.com:8443":    http.StatusOK,
		"ops.example.com":         http.StatusMisdirectedRequest,
		"localhost":               http.StatusOK,
	} {
		if code, _ := s.fetch(t, http.MethodGet, "/jobs", host, nil); code != want {
			t.Errorf("GET /jobs through Host %s: %d, want %d", host, code, want)
		}
	}
}

// TestServe_RefusesOpenAddressWithoutToken: an address beyond loopback
// without a token, an address that is no host:port, and an allowed host
// that is no host are usage errors, exit 2 with the usage line, refused
// before the file is opened (the --db named here does not exist). An
// address that is fine but taken is a runtime error, exit 1.
func TestServe_RefusesOpenAddressWithoutToken(t *testing.T) {
	c := func() *cli {
		c := testCLI("")
		c.db = filepath.Join(t.TempDir(), "missing.db")
		return c
	}
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"--addr", "0.0.0.0:0"}, "set a token"},
		{[]string{"--addr", ":8080"}, "every interface"},
		{[]string{"--addr", "192.0.2.1:8080"}, "192.0.2.1"},
		{[]string{"--addr", "localhost"}, `address "localhost"`},
		{[]string{"--addr", "127.0.0.1:99999"}, `port "99999"`},
		{[]string{"--addr", "127.0.0.1:http"}, `port "http"`},
		{[]string{"--allow-host", "https://queue.example.com"}, `"https://queue.example.com"`},
	} {
		r := runCLI(t, c(), append([]string{"serve"}, tt.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tt.says) || !strings.Contains(r.stderr, "usage: litequeue serve") {
			t.Errorf("serve %v: exit %d, stderr %q; want 2, saying %q, with the usage line", tt.args, r.code, r.stderr, tt.says)
		}
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	fx := newFixture(t)
	r := runCLI(t, fx.cli(""), "serve", "--addr", taken.Addr().String())
	if r.code != exitFailure || !strings.Contains(r.stderr, "address already in use") {
		t.Errorf("serve on a taken port: exit %d, stderr %q; want 1, saying it is in use", r.code, r.stderr)
	}
}
