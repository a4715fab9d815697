//go:build windows

package sqlite

import "golang.org/x/sys/windows"

// lock blocks until this process holds the exclusive lock (LockFileEx on
// the first byte).
func (l *fileLock) lock() error {
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(l.f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &ol)
}

func (l *fileLock) unlock() error {
	var ol windows.Overlapped
	return windows.UnlockFileEx(windows.Handle(l.f.Fd()), 0, 1, 0, &ol)
}

// noFollow is 0: os.OpenFile has no such flag on Windows, where only
// openFileLock's Lstat refuses a symbolic link (and making one needs a
// privilege, or developer mode).
const noFollow = 0
