package main

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

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
			// A short usage has what it does beside it, a long one under it.
			if !strings.Contains(help, "\n  "+sub.usage+"\n") && !strings.Contains(help, "\n  "+sub.usage+"  ") {
				t.Errorf("help %s does not show %q", cmd.name, sub.usage)
			}
		}
		if cmd.setup != nil && (!strings.Contains(help, "\nflags:\n") || !strings.Contains(help, "\n  -db path\n")) {
			t.Errorf("help %s shows no flags:\n%s", cmd.name, help)
		}
	}
}

// TestDoc_ListsEveryCommand: the command's doc comment (main.go) holds the
// overview of "litequeue help", made from the table of commands, so that
// it lists every command as the help does. On a failure it prints the
// block to paste.
func TestDoc_ListsEveryCommand(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	var help strings.Builder
	writeOverview(&help)
	var want strings.Builder
	for line := range strings.Lines(help.String()) {
		if line != "\n" {
			line = "\t" + line
		}
		want.WriteString(line)
	}
	if doc := f.Doc.Text(); !strings.Contains(doc, want.String()) {
		var block strings.Builder
		for line := range strings.Lines(want.String()) {
			block.WriteString(strings.TrimRight("//"+line, "\n") + "\n")
		}
		t.Errorf("the doc comment of main.go does not hold the overview of litequeue help; paste this block into it:\n%s", block.String())
	}
}
