package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestColor(t *testing.T) {
	fx := newFixture(t)
	c := fx.cli("")
	c.stdoutTTY = true
	r := mustRun(t, c, "list", "--state", "dead")
	if !strings.Contains(r.stdout, red+"dead"+reset) {
		t.Errorf("no colour on a terminal:\n%q", r.stdout)
	}
	// Painted, the columns still line up: strip the codes and compare.
	plain := mustRun(t, fx.cli(""), "list", "--state", "dead").stdout
	for _, code := range []string{red, bold, reset} {
		r.stdout = strings.ReplaceAll(r.stdout, code, "")
	}
	if diff := cmp.Diff(plain, r.stdout); diff != "" {
		t.Errorf("painted table, less its codes (-plain +painted):\n%s", diff)
	}

	c = fx.cli("")
	c.stdoutTTY = true
	c.getenv = func(k string) string {
		if k == "NO_COLOR" {
			return "1"
		}
		return ""
	}
	if r := mustRun(t, c, "list"); strings.Contains(r.stdout, "\x1b[") {
		t.Errorf("colour despite NO_COLOR:\n%q", r.stdout)
	}
}
