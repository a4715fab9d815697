//go:build !unix && !windows

package sqlite

// lock is a no-op where the platform has no file lock: writers of several
// processes then rely on SQLite's busy_timeout alone.
func (l *fileLock) lock() error { return nil }

func (l *fileLock) unlock() error { return nil }

// noFollow is 0 where the platform's open has no O_NOFOLLOW: only
// openFileLock's Lstat refuses a symbolic link.
const noFollow = 0
