package main

import (
	"context"
	"strings"
	"syscall"
	"testing"
)

func TestRun_ExitCodes(t *testing.T) {
	fx := newFixture(t)
	tests := []struct {
		args []string
		code int
		says string // in stderr
	}{
		{nil, exitUsage, "usage: litequeue"},
		{[]string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{[]string{"--nope", "list"}, exitUsage, "flag provided but not defined: -nope"},
		{[]string{"list", "--nope"}, exitUsage, "flag provided but not defined: -nope"},
		{[]string{"list", "extra"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"list", "--state", "bogus"}, exitUsage, `unknown state "bogus"`},
		{[]string{"list", "--limit", "-1"}, exitUsage, "--limit -1 is negative"},
		{[]string{"list", "--limit", "ten"}, exitUsage, `invalid value "ten" for flag -limit`},
		{[]string{"show"}, exitUsage, "missing arguments"},
		{[]string{"show", "abc"}, exitUsage, `job ID "abc" is not a positive whole number`},
		{[]string{"show", "0"}, exitUsage, `job ID "0" is not a positive whole number`},
		{[]string{"show", "99999999999999999999"}, exitUsage, "job ID 99999999999999999999 is over the largest, 9223372036854775807"},
		{[]string{"show", "1", "2"}, exitUsage, `unexpected argument "2"`},
		{[]string{"dead"}, exitUsage, "dead needs a command"},
		{[]string{"dead", "bury"}, exitUsage, `unknown command "dead bury"`},
		{[]string{"enqueue"}, exitUsage, "missing arguments"},
		{[]string{"enqueue", "k", "{bad"}, exitUsage, `payload "{bad" is not valid JSON`},
		{[]string{"enqueue", "k", "--delay", "3x"}, exitUsage, `"3x" is not a duration`},
		{[]string{"enqueue", "k", "--delay", "-5s"}, exitUsage, `"-5s" is negative`},
		{[]string{"enqueue", "k", "--max-tries", "51"}, exitUsage, "--max-tries 51 is outside 1…50"},
		{[]string{"enqueue", "", "{}"}, exitUsage, "the kind is empty"},
		{[]string{"--config", "testdata/bad.toml", "list"}, exitUsage, "testdata/bad.toml:3: retry: max_tries 80 is over the limit of 50"},
		{[]string{"--config", "testdata/missing.toml", "policy"}, exitUsage, "testdata/missing.toml"},
		{[]string{"policy", "a", "b"}, exitUsage, `unexpected argument "b"`},
		{[]string{"policy", "simulate", "--jobs", "0"}, exitUsage, "--jobs 0 is outside"},
		{[]string{"policy", "simulate", "--outage", "40d"}, exitUsage, "--outage 40d is over the limit of 30d"},
		{[]string{"policy", "simulate", "--outage", "0s"}, exitUsage, "--outage 0s: with no outage nothing fails"},
		{[]string{"policy", "simulate", "--svg", ""}, exitUsage, "--svg is empty"},
		{[]string{"policy", "simulate", "--svg", "/nonexistent/dir/x.svg"}, exitFailure, "/nonexistent/dir/x.svg"},
		{[]string{"policy", "simulate", "--outage", "soon"}, exitUsage, `"soon" is not a duration`},
		{[]string{"show", "999"}, exitFailure, "no job 999"},
		{[]string{"help", "frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{[]string{"--db=", "stats"}, exitUsage, `invalid value "" for flag -db: the path is empty`},
		{[]string{"list", "--config", ""}, exitUsage, `invalid value "" for flag -config: the path is empty`},
		{[]string{"--config", "testdata/bad.toml", "demo"}, exitUsage, "the demo takes no --config"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := runCLI(t, fx.cli(""), tt.args...)
			if r.code != tt.code || !strings.Contains(r.stderr, tt.says) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", r.code, r.stderr, tt.code, tt.says)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q, want none", r.stdout)
			}
		})
	}
}

// TestRun_OutputFails checks that a command whose output cannot be written
// (stdout on a full disk) fails, also when it writes a table or text.
func TestRun_OutputFails(t *testing.T) {
	for _, args := range [][]string{{"policy"}, {"policy", "--json"}, {"version"}, {"help"}} {
		c := testCLI("")
		var stderr strings.Builder
		c.stdout, c.stderr = fullDisk{}, &stderr
		code := c.run(context.Background(), args)
		if code != exitFailure || !strings.Contains(stderr.String(), "no space left on device") {
			t.Errorf("%s: exit %d, stderr %q; want exit 1 naming the write error", args, code, stderr.String())
		}
	}
}

// fullDisk is a writer that takes nothing.
type fullDisk struct{}

func (fullDisk) Write([]byte) (int, error) { return 0, syscall.ENOSPC }
