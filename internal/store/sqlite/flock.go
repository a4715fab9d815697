package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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

// openFileLock opens (creating, mode 0600) the lock file beside path. It
// refuses a lock path that is a symbolic link or anything but a regular
// file, and opens it without following a link (O_NOFOLLOW, where there is
// one): in a directory that others may write, a link planted there must
// not make a process, root's say, create or lock a file elsewhere.
func openFileLock(path string) (*fileLock, error) {
	name := path + "-lock"
	f, err := openLockFile(name)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == name {
			err = pe.Err // name it once, below
		}
		return nil, fmt.Errorf("open write lock %s: %w", filepath.Base(name), err)
	}
	return &fileLock{f: f}, nil
}

// openLockFile opens the lock file name, which must be a regular file or
// missing.
func openLockFile(name string) (*os.File, error) {
	if fi, err := os.Lstat(name); err == nil && !fi.Mode().IsRegular() {
		return nil, notRegular(fi.Mode())
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|noFollow, 0o600)
	if err != nil {
		return nil, err
	}
	// Lstat and open are two steps: check what was opened.
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = notRegular(fi.Mode())
		}
		return nil, err
	}
	return f, nil
}

// notRegular is the refusal of a lock file that is not a regular file.
func notRegular(m fs.FileMode) error {
	if m&fs.ModeSymlink != 0 {
		return errors.New("it is a symbolic link, which litequeue does not follow")
	}
	return fmt.Errorf("it is %s, not a regular file", FileType(m))
}

func (l *fileLock) close() error { return l.f.Close() }

// FileType names what a file that is not a regular file is.
func FileType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
