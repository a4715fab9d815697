package litequeue

import (
	"context"
	"fmt"
)

// Backups: a consistent copy of the queue's file taken while others work
// on it, which the file's engine makes (internal/store/sqlite). A replica
// kept by Litestream needs nothing here but Options.Checkpoint; the
// README's "Backups and replicas" says how to run and restore one.

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
	if err := q.st.eng.Backup(ctx, path, opts.Overwrite); err != nil {
		return fmt.Errorf("litequeue: backup to %s: %w", path, err)
	}
	return nil
}
