//go:build unix

package sqlite

import "syscall"

// lock blocks until this process holds the exclusive lock.
func (l *fileLock) lock() error {
	for {
		err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

func (l *fileLock) unlock() error {
	return syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
}

// noFollow makes openFileLock's open fail on a symbolic link.
const noFollow = syscall.O_NOFOLLOW
