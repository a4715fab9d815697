package prom

import (
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// modulePath is litequeue's module, whose version litequeue_build_info
// reports.
const modulePath = "github.com/litequeue/litequeue"

var buildInfoDesc = prometheus.NewDesc("litequeue_build_info",
	"Always 1: the version of litequeue, and of Go, that the program was built with.", []string{"version", "goversion"}, nil)

// buildInfo returns the series of litequeue_build_info of this program.
func buildInfo() prometheus.Metric {
	info, ok := debug.ReadBuildInfo()
	return prometheus.MustNewConstMetric(buildInfoDesc, prometheus.GaugeValue, 1, moduleVersion(info, ok), runtime.Version())
}

// moduleVersion returns the version of litequeue that the build info of
// a program records, as the go command wrote it ("v1.4.0",
// "v1.4.1-0.20260301090000-abcdef123456"): the main module's, when the
// program is in litequeue's own module (its command, its tests), else that
// of the module required, or of its replacement. "(devel)" is a build of
// a source tree with no version, "unknown" a program without build info.
func moduleVersion(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "unknown"
	}
	mod := &info.Main
	if mod.Path != modulePath {
		mod = nil
		for _, dep := range info.Deps {
			if dep.Path == modulePath {
				mod = dep
				break
			}
		}
	}
	switch {
	case mod == nil:
		return "unknown"
	case mod.Replace != nil:
		mod = mod.Replace
	}
	if mod.Version == "" {
		return "(devel)"
	}
	return mod.Version
}
