package main

import (
	"strings"
	"testing"
)

// TestRun_DidYouMean: a mistyped command names the one meant, within two
// edits; further off, none.
func TestRun_DidYouMean(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"staets"}, `unknown command "staets": did you mean "stats"?`},
		{[]string{"lsit"}, `did you mean "list"?`},
		{[]string{"migrat"}, `did you mean "migrate"?`},
		{[]string{"dead", "retyr"}, `unknown command "dead retyr": did you mean "dead retry"?`},
		{[]string{"breaker", "rest"}, `did you mean "breaker reset"?`},
		{[]string{"xyzzy"}, `unknown command "xyzzy" (run`},
	} {
		r := runCLI(t, testCLI(""), tc.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("litequeue %s: exit %d, %q; want 2 and %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.want)
		}
	}
	if d := editDistance("kitten", "sitting"); d != 3 {
		t.Errorf("editDistance(kitten, sitting) = %d, want 3", d)
	}
}
