package litequeue

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/litequeue/litequeue/internal/store/sqlite"
)

// Backups: a consistent copy of the queue's file taken while others work
// on it, and what Health says of a file's permissions. A replica kept by
// Litestream needs nothing here but Options.Checkpoint; the README's
// "Backups and replicas" says how to run and restore one.

// BackupOptions say how [Queue.Backup] writes its copy. The zero value
// refuses to replace a file.
type BackupOptions struct {
	// Overwrite lets [Queue.Backup] replace a file at the path. The old file
	// stays as it was until the copy is complete, and then is replaced in one
	// rename; a symbolic link there is replaced, not followed.
	Overwrite bool
}

// Backup writes a copy of the queue's file to path: the whole file as one
// transaction saw it, taken while [Queue.Work], [Queue.Enqueue] and other
// processes go on writing (they do not wait for it; checkpoints stop short
// of the copy's snapshot until it is done). The copy is made by SQLite's
// VACUUM INTO: it holds only live pages, so it may be smaller than the
// file, and it is in journal mode delete, with no -wal beside it.
// [Queue.Health] of the copy reports it as a Backup; [Open] switches it to
// WAL, as it does any file.
//
// The copy is created with mode 0600, written to a temporary file beside
// path, synced to disk and renamed into place: path never holds a part of
// a copy. Unless opts.Overwrite, an existing file at path is refused with
// an error wrapping [fs.ErrExist], and left as it was. Whatever the
// options, Backup replaces nothing but a regular file or a symbolic link:
// a directory, a named pipe, a socket or a device at path is refused. A
// failed Backup leaves nothing behind. Backup refuses the
// queue's own file and the -wal, -shm, -lock and -journal beside it, with
// any options. Every error names path.
//
// Backup only reads the queue's file, so it also works on a [Queue] from
// [OpenReadOnly]. It is safe for concurrent use; after [Queue.Close] it
// returns [ErrClosed]. A Queue on a server (package postgres) has no file
// to copy: Backup returns an error saying so, and the server's own tools
// (pg_dump, its replicas) back it up.
func (q *Queue) Backup(ctx context.Context, path string, opts BackupOptions) error {
	leave, err := q.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	if q.st.info.Path == "" { // a server: no file
		return fmt.Errorf("litequeue: backup to %s: a Queue on a server has no file to copy: back the server up with its own tools (pg_dump)", path)
	}
	if err := q.backup(ctx, path, opts); err != nil {
		return fmt.Errorf("litequeue: backup to %s: %w", path, withoutPath(err))
	}
	return nil
}

// backup is Backup once the Queue is entered.
func (q *Queue) backup(ctx context.Context, path string, opts BackupOptions) (err error) {
	if path == "" {
		return errors.New("the path is empty")
	}
	dst, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if err := q.notOwnFile(dst); err != nil {
		return err
	}
	if err := replaceable(dst); err != nil {
		return err
	}
	if !opts.Overwrite {
		// Reserve the name, so that nothing is ever replaced, also a file
		// made meanwhile.
		if err := sqlite.CreateFile(dst); err != nil {
			return err
		}
		defer func() {
			if err != nil {
				os.Remove(dst)
			}
		}()
	}
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
	if err := q.vacuumInto(ctx, tmp.Name()); err != nil {
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

// notOwnFile refuses dst, an absolute path, if it is the queue's file or
// one SQLite or litequeue keeps beside it: by name, or, for a file that
// exists, as the same file under another name (a link, a path that differs
// in case on a file system that ignores it).
func (q *Queue) notOwnFile(dst string) error {
	own, err := filepath.Abs(q.st.info.Path)
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
		return fmt.Errorf("it is %s, not a file a backup may replace", sqlite.FileType(fi.Mode()))
	}
	return nil
}

// backupSQL writes a copy of the database to the file its argument names,
// which must be missing or empty. VACUUM INTO is SQLite's.
const backupSQL = `VACUUM INTO ?`

// vacuumInto runs backupSQL on a connection of the queue's reads. VACUUM
// INTO writes only the new file, but query_only, which the reads of a
// Queue from OpenReadOnly have, refuses it: vacuumInto lifts it for the
// statement, and closes the connection if it cannot set it back.
func (q *Queue) vacuumInto(ctx context.Context, path string) (err error) {
	conn, err := q.st.reads.Connx(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var queryOnly bool
	if err := conn.GetContext(ctx, &queryOnly, `PRAGMA query_only`); err != nil {
		return err
	}
	if queryOnly {
		if _, err := conn.ExecContext(ctx, `PRAGMA query_only = 0`); err != nil {
			return err
		}
		defer func() {
			if _, rerr := conn.ExecContext(context.Background(), `PRAGMA query_only = 1`); rerr != nil {
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
// names, for an error that names the path already.
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
