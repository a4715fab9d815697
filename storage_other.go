//go:build !unix

package litequeue

import "os"

// writable reports whether this process may write the file at path by
// opening it for writing. Closing the descriptor drops no lock here, as
// it does on POSIX (see openFile): Windows' file locks belong to the
// handle that took them.
func writable(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	return f.Close()
}
