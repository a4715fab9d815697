//go:build !unix

package sqlite

import (
	"io/fs"
	"os"
)

// accessible reports whether this process may read the file at path, or
// write it if write, by opening it so. Closing the descriptor drops no
// lock here, as it does on POSIX (see openFile): Windows' file locks
// belong to the handle that took them.
func accessible(path string, write bool) error {
	flag := os.O_RDONLY
	if write {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

// unwritableSides finds nothing: Windows has no Unix file modes, and
// SQLite gives no -shm a mode of its own.
func unwritableSides(path string, self bool) []string { return nil }

// makesUnwritableSides reports false: see unwritableSides.
func makesUnwritableSides(db fs.FileInfo) bool { return false }
