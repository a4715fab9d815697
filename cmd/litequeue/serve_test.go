package main

import (
	"context"
	"io"
	"net/http"
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

// TestServe runs "serve" on the fixture's file: it says where it listens,
// serves the overview read-only, refuses a write, and exits 0 once
// interrupted.
func TestServe(t *testing.T) {
	fx := newFixture(t)
	c := fx.cli("")
	var stderr lockedBuffer
	c.stdout, c.stderr = io.Discard, &stderr
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	exit := make(chan int, 1)
	go func() { exit <- c.run(ctx, []string{"serve", "--addr", "127.0.0.1:0"}) }()

	addrRE := regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+/)`)
	var base string
	deadline := time.Now().Add(10 * time.Second)
	for base == "" {
		if m := addrRE.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("serve never said where it listens; stderr:\n%s", stderr.String())
		}
		select {
		case code := <-exit:
			t.Fatalf("serve exited %d before serving; stderr:\n%s", code, stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
	}

	resp, err := http.Get(base)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Overview") {
		t.Fatalf("GET / = %d, body without the overview:\n%.300s", resp.StatusCode, body)
	}
	resp, err = http.Post(base+"dead/replay", "application/x-www-form-urlencoded", strings.NewReader("id=1"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "read-only") {
		t.Fatalf("a write without --allow-writes answered %d %q, want 403, read-only", resp.StatusCode, body)
	}

	stop()
	select {
	case code := <-exit:
		if code != exitOK {
			t.Fatalf("serve exited %d after the interrupt, want 0; stderr:\n%s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not return after the interrupt")
	}
}

// TestServe_RefusesOpenAddressWithoutToken: an address beyond loopback is
// refused before anything listens, unless a token is set.
func TestServe_RefusesOpenAddressWithoutToken(t *testing.T) {
	fx := newFixture(t)
	r := runCLI(t, fx.cli(""), "serve", "--addr", "0.0.0.0:0")
	if r.code == exitOK || !strings.Contains(r.stderr, "token") {
		t.Fatalf("serve --addr 0.0.0.0:0 = exit %d, stderr %q; want a failure that names the token", r.code, r.stderr)
	}
}
