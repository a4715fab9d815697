package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/litequeue/litequeue/internal/pgtest"
)

// TestServer copies the fixture's file onto a PostgreSQL server with
// "copy", then works on the server with --db postgres://…: its dead
// letters are the file's, every command that reads or changes it runs,
// and no output shows the password.
func TestServer(t *testing.T) {
	dsn := pgtest.DSN(t)
	fx := newFixture(t)
	onFile := func(args ...string) result { return mustRun(t, fx.cli(""), args...) }
	onTheServer := func(args ...string) result {
		c := fx.cli("")
		c.db = dsn
		return runCLI(t, c, args...)
	}

	r := onFile("copy", "--to", dsn)
	if !strings.HasPrefix(r.stdout, "copied ") {
		t.Fatalf("copy printed %q", r.stdout)
	}
	t.Log(strings.TrimSpace(r.stdout))

	var fileDead, serverDead []jobJSON
	if err := json.Unmarshal([]byte(onFile("dead", "list", "--json").stdout), &fileDead); err != nil {
		t.Fatal(err)
	}
	r = onTheServer("dead", "list", "--json")
	if r.code != exitOK {
		t.Fatalf("dead list on the server: exit %d: %s", r.code, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), &serverDead); err != nil {
		t.Fatal(err)
	}
	if len(fileDead) == 0 {
		t.Fatal("the fixture has no dead jobs")
	}
	if diff := cmp.Diff(fileDead, serverDead, cmpopts.IgnoreFields(jobJSON{}, "ID")); diff != "" {
		t.Errorf("dead letters (-file +server):\n%s", diff)
	}
	id := fmt.Sprint(serverDead[0].ID)
	for _, args := range [][]string{
		{"stats"}, {"list"}, {"show", id}, {"check"},
		{"enqueue", "email.send", `{"to":"ada@example.com"}`},
		{"dead", "retry", id}, {"cancel", id},
	} {
		r := onTheServer(args...)
		if r.code != exitOK {
			t.Errorf("litequeue %s on the server: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
		}
		u, _ := url.Parse(dsn)
		if pw, ok := u.User.Password(); ok && strings.Contains(r.stdout+r.stderr, pw) {
			t.Errorf("litequeue %s printed the password", strings.Join(args, " "))
		}
	}

	// A database without litequeue's tables is refused, not set up.
	c := fx.cli("")
	c.db = pgtest.DSN(t)
	if r := runCLI(t, c, "stats"); r.code != exitFailure || !strings.Contains(r.stderr, "no litequeue tables") {
		t.Errorf("stats on an empty database: exit %d, %q", r.code, r.stderr)
	}
}
