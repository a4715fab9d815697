package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version defines the flags of "version", none of its own, and returns
// the command.
func (c *cli) version(fs *flagSet) runFunc {
	return func(context.Context, []string) error {
		v, extra := "(devel)", ""
		if info, ok := debug.ReadBuildInfo(); ok {
			if info.Main.Version != "" {
				v = info.Main.Version
			}
			extra = vcsInfo(info.Settings)
		}
		fmt.Fprintf(c.stdout, "litequeue %s%s %s %s/%s\n", v, extra, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return nil
	}
}

// vcsInfo returns " (commit abc123def456)" from a binary's build settings,
// or "" when the build did not record one.
func vcsInfo(settings []debug.BuildSetting) string {
	var rev, modified string
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if rev == "" {
		return ""
	}
	return fmt.Sprintf(" (commit %.12s%s)", rev, modified)
}
