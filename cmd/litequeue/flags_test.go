package main

import (
	"strings"
	"testing"
)

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
