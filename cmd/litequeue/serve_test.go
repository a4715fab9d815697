package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
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

// noRedirects is a client that shows redirects instead of following them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

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

// logLines returns the lines of the served command's stderr that hold
// every one of wants.
func (s *served) logLines(wants ...string) []string {
	var lines []string
	for line := range strings.Lines(s.stderr.String()) {
		all := true
		for _, w := range wants {
			all = all && strings.Contains(line, w)
		}
		if all {
			lines = append(lines, line)
		}
	}
	return lines
}

// TestServe_LogsRefusalsAndErrors: serve logs on stderr, with a level, the
// requests it refuses (a foreign Host, a write from another site's page,
// a form without its CSRF token) and the errors behind its 500 pages (here, the file cut to nothing
// under it); a request served well is not logged without --access-log.
func TestServe_LogsRefusalsAndErrors(t *testing.T) {
	fx := newFixture(t)
	s := startServe(t, fx.cli(""), "--addr", "127.0.0.1:0", "--allow-writes")
	if code, _ := s.fetch(t, http.MethodGet, "/jobs", "", nil); code != http.StatusOK {
		t.Fatalf("GET /jobs: %d", code)
	}
	if lines := s.logLines("/jobs"); len(lines) != 0 {
		t.Errorf("without --access-log a request served well is logged: %q", lines)
	}
	s.fetch(t, http.MethodGet, "/jobs/1", "rebind.attacker.example", nil)
	if lines := s.logLines("level=WARN", "another host", "host=rebind.attacker.example", "path=/jobs/1"); len(lines) != 1 {
		t.Errorf("a foreign Host is not logged once as a warning:\n%s", s.stderr.String())
	}
	req, err := http.NewRequest(http.MethodPost, s.base+"dead/replay", strings.NewReader("csrf=x"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", "http://evil.example")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if lines := s.logLines("level=WARN", "cross-origin", "origin=http://evil.example", "path=/dead/replay"); len(lines) != 1 {
		t.Errorf("a cross-origin post is not logged once as a warning:\n%s", s.stderr.String())
	}
	s.fetch(t, http.MethodPost, "/dead/replay", "", strings.NewReader("csrf=stale"))
	if lines := s.logLines("level=INFO", "CSRF", "path=/dead/replay"); len(lines) != 1 || strings.Contains(lines[0], "stale") {
		t.Errorf("a post without the form's CSRF token is not logged once, without the token:\n%s", s.stderr.String())
	}
	if err := os.Truncate(fx.path, 0); err != nil {
		t.Fatal(err)
	}
	code, body := s.fetch(t, http.MethodGet, "/jobs", "", nil)
	if code != http.StatusInternalServerError || !strings.Contains(body, "the server's log has the details") {
		t.Fatalf("GET /jobs of a file cut to nothing: %d %q, want the 500 page", code, body)
	}
	if lines := s.logLines("level=ERROR", "err="); len(lines) != 1 {
		t.Errorf("the error behind the 500 is not logged once as an error:\n%s", s.stderr.String())
	}
}

// TestServe_AccessLogKeepsNoSecret: with --access-log, serve logs each
// request with its method, path, status, size, time and client; a request
// without the right token is logged as refused. Neither the token nor a
// wrong one is ever written, also when given as ?token=.
func TestServe_AccessLogKeepsNoSecret(t *testing.T) {
	fx := newFixture(t)
	const token, wrong = "s3cret-t0ken", "n3ar-m1ss"
	s := startServe(t, fx.cli(""), "--addr", "127.0.0.1:0", "--token", token, "--access-log")
	get := func(path string, h http.Header) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, s.base+strings.TrimPrefix(path, "/"), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header = h
		resp, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	get("/jobs?state=dead", http.Header{"Authorization": {"Bearer " + token}})
	if lines := s.logLines("level=INFO", "method=GET", "path=/jobs", `query="state=dead"`, "status=200", "bytes=", "duration=", "remote=127.0.0.1:"); len(lines) != 1 {
		t.Errorf("the access log does not have the GET of /jobs once:\n%s", s.stderr.String())
	}
	get("/jobs?state=dead&token="+token, nil)
	if lines := s.logLines("path=/jobs", "status=303"); len(lines) != 1 {
		t.Errorf("the access log does not have the redirect of ?token= once:\n%s", s.stderr.String())
	}
	get("/policies", http.Header{"Authorization": {"Bearer " + wrong}})
	if lines := s.logLines("level=WARN", "wrong token", "path=/policies"); len(lines) != 1 {
		t.Errorf("a wrong token is not logged once as a warning:\n%s", s.stderr.String())
	}
	get("/policies?token="+wrong, nil)
	get("/", nil)
	if lines := s.logLines("level=INFO", "without the token", "path=/ "); len(lines) != 1 {
		t.Errorf("a request without a token is not logged once:\n%s", s.stderr.String())
	}
	if lines := s.logLines("path=/policies", "status=401"); len(lines) != 2 {
		t.Errorf("the access log does not have the two refusals of /policies:\n%s", s.stderr.String())
	}
	for _, secret := range []string{token, wrong} {
		if strings.Contains(s.stderr.String(), secret) {
			t.Errorf("the log holds the token %q:\n%s", secret, s.stderr.String())
		}
	}
}
