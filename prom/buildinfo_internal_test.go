package prom

import (
	"runtime/debug"
	"testing"
)

// TestModuleVersion reads litequeue's version from the build info of
// programs of every shape: litequeue's own command, an app that requires
// it, replaced by a directory or by another version, none.
func TestModuleVersion(t *testing.T) {
	app := debug.Module{Path: "example.com/app", Version: "v0.3.0"}
	lq := func(version string, replace *debug.Module) *debug.Module {
		return &debug.Module{Path: modulePath, Version: version, Replace: replace}
	}
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"the command, installed", &debug.BuildInfo{Main: *lq("v1.4.0", nil)}, true, "v1.4.0"},
		{"the command, built in its tree", &debug.BuildInfo{Main: *lq("", nil)}, true, "(devel)"},
		{"an app", &debug.BuildInfo{Main: app, Deps: []*debug.Module{{Path: "modernc.org/sqlite", Version: "v1.62.0"}, lq("v1.4.0", nil)}}, true, "v1.4.0"},
		{"an app, replaced by a directory", &debug.BuildInfo{Main: app, Deps: []*debug.Module{lq("v1.4.0", &debug.Module{Path: "../litequeue"})}}, true, "(devel)"},
		{"an app, replaced by a fork", &debug.BuildInfo{Main: app, Deps: []*debug.Module{lq("v1.4.0", &debug.Module{Path: "example.com/fork", Version: "v1.4.1-fix"})}}, true, "v1.4.1-fix"},
		{"an app without litequeue", &debug.BuildInfo{Main: app}, true, "unknown"},
		{"no build info", nil, false, "unknown"},
	} {
		if got := moduleVersion(tc.info, tc.ok); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
