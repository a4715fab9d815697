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

func TestRun_Help(t *testing.T) {
	r := mustRun(t, testCLI(""), "help")
	if !strings.HasPrefix(r.stdout, "usage: litequeue") {
		t.Errorf("help: %q", r.stdout)
	}
	for _, args := range [][]string{{"-h"}, {"--help"}} {
		if r := mustRun(t, testCLI(""), args...); !strings.HasPrefix(r.stdout, "usage: litequeue") || r.stderr != "" {
			t.Errorf("%s: stdout %q, stderr %q", args, r.stdout, r.stderr)
		}
	}
	for _, tt := range []struct {
		args []string
		want string // the start of stdout
		flag string // a flag the help shows
	}{
		{[]string{"list", "-h"}, "usage: litequeue list", "-state"},
		{[]string{"help", "list"}, "usage: litequeue list", "-state"},
		{[]string{"dead", "-h"}, "usage: litequeue dead list|retry|purge", "dead purge [--older-than D]"},
		{[]string{"help", "dead"}, "usage: litequeue dead list|retry|purge", "dead purge [--older-than D]"},
		{[]string{"help", "dead", "retry"}, "usage: litequeue dead retry", "-all"},
		{[]string{"help", "policy", "simulate"}, "usage: litequeue policy simulate", "-outage"},
		{[]string{"demo", "-h"}, "usage: litequeue demo", "never $LITEQUEUE_DB"},
	} {
		r := mustRun(t, testCLI(""), tt.args...)
		if !strings.HasPrefix(r.stdout, tt.want) || !strings.Contains(r.stdout, tt.flag) || r.stderr != "" {
			t.Errorf("%s: stdout %q, stderr %q; want %q with %q", tt.args, r.stdout, r.stderr, tt.want, tt.flag)
		}
	}
}

func TestParse_FlagsAfterArguments(t *testing.T) {
	c := testCLI("")
	fs := c.flagSet(&command{name: "x", usage: "x", max: -1})
	yes := fs.Bool("yes", false, "")
	q := fs.String("queue", "", "")
	pos, err := fs.parse([]string{"5", "--yes", "6", "--queue", "q", "--", "--7"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(pos, " ") != "5 6 --7" || !*yes || *q != "q" {
		t.Errorf("got %q, yes %v, queue %q", pos, *yes, *q)
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

// TestRun_HelpFromTable checks that the help is made from the table of
// commands: the overview shows every command's usage line and what it
// does, and "help COMMAND" and "COMMAND -h" show its usage line, and its
// flags or its subcommands.
func TestRun_HelpFromTable(t *testing.T) {
	overview := mustRun(t, testCLI(""), "help").stdout
	var all []*command
	for _, cmd := range commands() {
		all = append(all, cmd)
		all = append(all, cmd.subs...)
	}
	for _, cmd := range all {
		if cmd.group != "" && (!strings.Contains(overview, "\n  "+cmd.usage) || !strings.Contains(overview, cmd.short+"\n")) {
			t.Errorf("the help does not show %q: %q", cmd.usage, cmd.short)
		}
		want := "usage: litequeue " + cmd.usage + "\n"
		help := mustRun(t, testCLI(""), append([]string{"help"}, strings.Fields(cmd.name)...)...).stdout
		if !strings.HasPrefix(help, want) {
			t.Errorf("help %s: %q, want it to start with %q", cmd.name, help, want)
		}
		if h := mustRun(t, testCLI(""), append(strings.Fields(cmd.name), "-h")...).stdout; h != help {
			t.Errorf("%s -h:\n%s\nhelp %s:\n%s", cmd.name, h, cmd.name, help)
		}
		for _, sub := range cmd.subs {
			if !strings.Contains(help, "\n  "+sub.usage+"\n") {
				t.Errorf("help %s does not show %q", cmd.name, sub.usage)
			}
		}
		if cmd.setup != nil && (!strings.Contains(help, "\nflags:\n") || !strings.Contains(help, "\n  -db path\n")) {
			t.Errorf("help %s shows no flags:\n%s", cmd.name, help)
		}
	}
}
