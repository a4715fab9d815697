package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestSession runs the commands that read and change a database one after
// another on the fixture, as an operator would, and keeps the transcript
// in a golden file: what each prints, and its exit status.
func TestSession(t *testing.T) {
	fx := newFixture(t)
	var b strings.Builder
	for _, line := range []string{
		"check",
		"dead list",
		"dead retry 2 3",
		"dead retry 1",
		"list --state pending",
		"enqueue email.send \"x@example.com\" --unique digest-grace",
		"cancel 4 5",
		"enqueue report.render {\"month\":\"2026-03\"} --queue reports --delay 90s --priority 2",
		"list --queue reports",
		"dead purge --dry-run",
		"stats",
		"version",
	} {
		args := strings.Fields(line)
		r := runCLI(t, fx.cli(""), args...)
		fmt.Fprintf(&b, "$ litequeue %s\n%s", line, r.stdout)
		if r.stderr != "" {
			fmt.Fprintf(&b, "[stderr]\n%s", r.stderr)
		}
		fmt.Fprintf(&b, "[exit %d]\n\n", r.code)
	}
	got := strings.ReplaceAll(b.String(), fx.path, "DB")
	got = versionLine.ReplaceAllString(got, "litequeue VERSION")
	golden(t, "session.golden", got)
}
