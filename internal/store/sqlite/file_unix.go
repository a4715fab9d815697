//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

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

// unwritableSides describes the -shm and -wal beside the database file at
// path that its writers may not write: SQLite opens such a file read-only,
// and every write fails ("attempt to write a readonly database"). A read
// by a user who could not write the database file leaves them so (see
// readAccessOf). With self, it names those this process may not write,
// for Open; else those the database file's owner may not write, for
// Health.
func unwritableSides(path string, self bool) []string {
	db, err := os.Stat(path)
	if err != nil {
		return nil
	}
	var found []string
	for _, side := range []string{path + "-shm", path + "-wal"} {
		fi, err := os.Stat(side)
		if err != nil {
			continue
		}
		who := fmt.Sprintf("the database file's owner (uid %d)", owner(db))
		cannot := !ownerWrites(db, owner(fi), fi.Mode())
		if self {
			who = fmt.Sprintf("this process (uid %d)", os.Geteuid())
			cannot = errors.Is(accessible(side, true), fs.ErrPermission)
		}
		if cannot {
			q := shellQuote(side)
			found = append(found, fmt.Sprintf("%s has mode %04o and owner uid %d: %s cannot write it, and every write fails: chown %d %s && chmod 600 %s",
				side, fi.Mode().Perm(), owner(fi), who, owner(db), q, q))
		}
	}
	return found
}

// makesUnwritableSides reports whether a -wal or -shm that SQLite made
// beside the database file db for this process would be one the file's
// owner may not write: SQLite gives them db's mode, and this user as
// owner, or db's owner if this process runs as root.
func makesUnwritableSides(db fs.FileInfo) bool {
	maker := uint32(os.Geteuid())
	if maker == 0 {
		maker = owner(db)
	}
	return !ownerWrites(db, maker, db.Mode())
}

// ownerWrites reports whether the owner of the database file db may write
// a file of the given owner and mode: as its owner, or as one of the
// users its group or every user may write it.
func ownerWrites(db fs.FileInfo, uid uint32, mode fs.FileMode) bool {
	return mode&0o022 != 0 || uid == owner(db) && mode&0o200 != 0
}

// owner is the user ID of the file fi describes.
func owner(fi fs.FileInfo) uint32 { return fi.Sys().(*syscall.Stat_t).Uid }
