package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// Backup writes a copy of the file to path with SQLite's VACUUM INTO: the
// whole file as one transaction saw it, taken while others go on writing
// (checkpoints stop short of the copy's snapshot until it is done), with
// only live pages, in journal mode delete, with no -wal beside it.
//
// The copy is created with mode 0600, written to a temporary file beside
// path, synced to disk and renamed into place: path never holds a part of
// a copy. Unless overwrite, an existing file at path is refused with an
// error wrapping fs.ErrExist, and left as it was. Whatever overwrite says,
// Backup replaces nothing but a regular file or a symbolic link (replaced,
// not followed), and refuses the engine's own file and the -wal, -shm,
// -lock and -journal beside it. A failed Backup leaves nothing behind. It
// only reads the file, so a read-only Engine backs up too. Its errors do
// not name path: the caller does.
func (e *Engine) Backup(ctx context.Context, path string, overwrite bool) error {
	if err := e.backup(ctx, path, overwrite); err != nil {
		return withoutPath(err)
	}
	return nil
}

// backup is Backup, its errors naming path as the os package does.
func (e *Engine) backup(ctx context.Context, path string, overwrite bool) (err error) {
	if path == "" {
		return errors.New("the path is empty")
	}
	dst, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if err := e.notOwnFile(dst); err != nil {
		return err
	}
	if err := replaceable(dst); err != nil {
		return err
	}
	if !overwrite {
		// Reserve the name, so that nothing is ever replaced, also a file
		// made meanwhile.
		if err := createFile(dst); err != nil {
			return err
		}
		defer func() {
			if err != nil {
				os.Remove(dst)
			}
		}()
	}
	return e.copyOnto(ctx, dst)
}

// copyOnto writes the copy to a temporary file beside dst, an absolute
// path, syncs it, and renames it onto dst: a failed copy leaves no
// temporary file behind.
func (e *Engine) copyOnto(ctx context.Context, dst string) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp*")
	if err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			// A copy larger than SQLite's page cache is written under a
			// rollback journal, which a failed VACUUM INTO leaves behind.
			os.Remove(tmp.Name())
			os.Remove(tmp.Name() + "-journal")
		}
	}()
	if err := e.vacuumInto(ctx, tmp.Name()); err != nil {
		return err
	}
	// VACUUM INTO does not sync what it wrote.
	if err := syncFile(tmp.Name()); err != nil {
		return err
	}
	// Once more, for what was made at dst while the copy was written.
	if err := replaceable(dst); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dst))
}

// notOwnFile refuses dst, an absolute path, if it is the engine's file or
// one SQLite or litequeue keeps beside it: by name, or, for a file that
// exists, as the same file under another name (a link, a path that differs
// in case on a file system that ignores it).
func (e *Engine) notOwnFile(dst string) error {
	own, err := filepath.Abs(e.path)
	if err != nil {
		return err
	}
	dstInfo, dstErr := os.Stat(dst)
	for _, suffix := range []string{"", "-wal", "-shm", "-lock", "-journal"} {
		same := dst == own+suffix
		if fi, err := os.Stat(own + suffix); !same && dstErr == nil && err == nil {
			same = os.SameFile(dstInfo, fi)
		}
		switch {
		case same && suffix == "":
			return errors.New("it is the queue's own file")
		case same:
			return fmt.Errorf("it is the queue's %s file", suffix)
		}
	}
	return nil
}

// replaceable refuses dst if a rename onto it would replace something
// other than a file: only a regular file or a symbolic link (replaced, not
// followed) may be there.
func replaceable(dst string) error {
	fi, err := os.Lstat(dst)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if t := fi.Mode().Type(); t != 0 && t != fs.ModeSymlink {
		return fmt.Errorf("it is %s, not a file a backup may replace", FileType(fi.Mode()))
	}
	return nil
}

// backupSQL writes a copy of the database to the file its argument names,
// which must be missing or empty.
const backupSQL = `VACUUM INTO ?`

// The pragmas by which vacuumInto lifts query_only for its statement.
const (
	queryOnlySQL    = `PRAGMA query_only`
	queryOnlyOffSQL = `PRAGMA query_only = 0`
	queryOnlyOnSQL  = `PRAGMA query_only = 1`
)

// vacuumInto runs backupSQL on a connection of litequeue's reads. VACUUM
// INTO writes only the new file, but query_only, which the reads of a
// read-only Engine have, refuses it: vacuumInto lifts it for the
// statement, and closes the connection if it cannot set it back.
func (e *Engine) vacuumInto(ctx context.Context, path string) (err error) {
	conn, err := e.db.Connx(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var queryOnly bool
	if err := conn.GetContext(ctx, &queryOnly, queryOnlySQL); err != nil {
		return err
	}
	if queryOnly {
		if _, err := conn.ExecContext(ctx, queryOnlyOffSQL); err != nil {
			return err
		}
		defer func() {
			if _, rerr := conn.ExecContext(context.Background(), queryOnlyOnSQL); rerr != nil {
				conn.Raw(func(any) error { return driver.ErrBadConn }) // the pool closes it
				err = errors.Join(err, rerr)
			}
		}()
	}
	_, err = conn.ExecContext(ctx, backupSQL, path)
	return err
}

// syncFile writes the file, or directory, at path to disk.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	return errors.Join(err, f.Close())
}

// syncDir writes the directory at path to disk, so that a rename in it
// survives a power loss. Windows cannot sync a directory, and needs not.
func syncDir(path string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	return syncFile(path)
}

// withoutPath is err without the path that an error of the os package
// names, for an error whose caller names the path.
func withoutPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && err.Error() == pe.Error() {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	var le *os.LinkError
	if errors.As(err, &le) && err.Error() == le.Error() {
		return fmt.Errorf("%s: %w", le.Op, le.Err)
	}
	return err
}
