//go:build unix

package litequeue

import "golang.org/x/sys/unix"

// writable reports, without opening it, whether this process may write
// the file at path: an error wrapping EACCES, EPERM (an immutable file) or
// EROFS (a read-only mount) if not. Opening the file to find out would
// drop SQLite's locks on it when the descriptor is closed (see openFile).
// access(2) asks for the real user, which is the effective one but in a
// set-user-ID program.
func writable(path string) error {
	return unix.Access(path, unix.W_OK)
}
