package litequeue

import (
	"fmt"
	"os"
)

// fileLock serialises litequeue's writers across processes with an
// operating-system lock on a side file (<db>-lock), taken before BEGIN
// IMMEDIATE and released after COMMIT. SQLite's own busy handler polls
// rather than queues, so under contention some writers would wait past any
// busy_timeout and fail with SQLITE_BUSY; the OS lock queues them instead.
// Within one process the writer's mutex already serialises; the file lock
// orders writers of different processes (and of different Queues on one
// file). The app's own transactions on DB() do not take it: they rely on
// busy_timeout.
type fileLock struct{ f *os.File }

// openFileLock opens (creating, mode 0600) the lock file beside path.
func openFileLock(path string) (*fileLock, error) {
	f, err := os.OpenFile(path+"-lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open write lock: %w", err)
	}
	return &fileLock{f: f}, nil
}

func (l *fileLock) close() error { return l.f.Close() }
