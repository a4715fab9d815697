package main

import (
	"regexp"
	"strings"
	"testing"
)

// versionLine matches what "version" prints.
var versionLine = regexp.MustCompile(`litequeue \S+.* go1\.\d+\S* \w+/\w+`)

func TestVersion(t *testing.T) {
	r := mustRun(t, testCLI(""), "version")
	if !versionLine.MatchString(r.stdout) || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("version: %q", r.stdout)
	}
}
