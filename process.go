package litequeue

import (
	"fmt"
	"os"
	"sync"
)

// process names this process where litequeue records who did something:
// the worker of a run in the history ("host:pid"), a Work loop's row in
// litequeue_workers, and the recorded policies. Read once.
type process struct {
	host string // os.Hostname; empty if it failed
	pid  int
}

var thisProcess = sync.OnceValue(func() process {
	host, _ := os.Hostname()
	return process{host: host, pid: os.Getpid()}
})

// String is the worker's name in the history: host:pid.
func (p process) String() string { return fmt.Sprintf("%s:%d", p.host, p.pid) }
