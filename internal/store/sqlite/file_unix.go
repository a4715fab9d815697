//go:build unix

package sqlite

import "golang.org/x/sys/unix"

// accessible reports, without opening it, whether this process may read
// the file at path, or write it if write: an error wrapping EACCES, EPERM
// (an immutable file) or EROFS (a read-only mount) if not. Opening the
// file to find out would drop SQLite's locks on it when the descriptor is
// closed (see openFile). access(2) asks for the real user, which is the
// effective one but in a set-user-ID program.
func accessible(path string, write bool) error {
	mode := uint32(unix.R_OK)
	if write {
		mode = unix.W_OK
	}
	return unix.Access(path, mode)
}
