//go:build unix

package litequeue_test

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/litequeue/litequeue"
)

// The tests of a file read by a user who may not write it. As root they
// run the litequeue command, and the sqlite3 shell, as other users: the
// file's owner is nobody, and another user uid 4242; root, whom file
// modes do not stop, is a reader of its own. As another user they run as
// that user, the file's owner, and skip what needs a second user.

// otherUser is a user who is not the file's owner.
var otherUser = &syscall.Credential{Uid: 4242, Gid: 4242}

// readCase is a reader of a queue file of the owner's, made with mode in a
// directory of dirMode (see ownedQueue).
type readCase struct {
	name    string
	mode    fs.FileMode
	dirMode fs.FileMode
	reader  *syscall.Credential
}

// fileUsers returns the litequeue command, built so that every user may
// run it, and the user who owns the test's files: nobody as root, else
// this process's user.
func fileUsers(t *testing.T) (command string, owner *syscall.Credential) {
	t.Helper()
	command = buildCommand(t)
	if os.Geteuid() != 0 {
		return command, &syscall.Credential{Uid: uint32(os.Geteuid()), Gid: uint32(os.Getegid())}
	}
	if err := os.Chmod(filepath.Dir(command), 0o755); err != nil {
		t.Fatal(err)
	}
	return command, &syscall.Credential{Uid: 65534, Gid: 65534}
}

// ownedQueue makes a queue file with one job, owned by owner, in a
// directory of its own, and gives the file and the directory the modes.
func ownedQueue(t *testing.T, owner *syscall.Credential, mode, dirMode fs.FileMode) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "jobs.db")
	q := openAt(t, path, litequeue.Options{})
	enqueue(t, q, "send", nil)
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-lock", dir} {
		if err := os.Chown(f, int(owner.Uid), int(owner.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		path string
		mode fs.FileMode
	}{{filepath.Dir(dir), 0o755}, {dir, dirMode}, {path, mode}} { // t.TempDir's parent: 0700
		if err := os.Chmod(c.path, c.mode); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// runAs runs a program as the user as, and returns what it printed.
func runAs(t *testing.T, as *syscall.Credential, name string, args ...string) (string, error) {
	t.Helper()
	if as != nil && as.Uid != uint32(os.Geteuid()) && os.Geteuid() != 0 {
		t.Skipf("needs root, to run %s as uid %d", filepath.Base(name), as.Uid)
	}
	cmd := exec.CommandContext(t.Context(), name, args...)
	if as != nil && as.Uid != uint32(os.Geteuid()) {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: as}
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// mustRunAs is runAs, failing the test if the program fails.
func mustRunAs(t *testing.T, as *syscall.Credential, name string, args ...string) string {
	t.Helper()
	out, err := runAs(t, as, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return out
}

// sideFilesLeft fails the test if a -wal or -shm is beside the file, naming
// its mode and owner.
func sideFilesLeft(t *testing.T, path, after string) {
	t.Helper()
	for _, f := range []string{path + "-wal", path + "-shm"} {
		if fi, err := os.Stat(f); err == nil {
			t.Errorf("after %s: %s is left, mode %04o, owner %d", after, f, fi.Mode().Perm(), fi.Sys().(*syscall.Stat_t).Uid)
		}
	}
}

// TestOpenReadOnly_NothingLeftUnwritable: the litequeue command's stats and
// check, run by a user who may not write the database file, leave no -wal
// or -shm beside it, which SQLite would make with the file's mode (0400)
// or that user as owner: the file's owner could not write them, and every
// write would fail ("attempt to write a readonly database") once the file
// is writable again. Then its owner enqueues as before. Root's reads of a
// file of mode 0400 leave nothing either.
func TestOpenReadOnly_NothingLeftUnwritable(t *testing.T) {
	fileOnly(t, "the files beside the database")
	t.Parallel()
	command, owner := fileUsers(t)
	for _, tt := range []readCase{
		{"its owner, mode 0400", 0o400, 0o700, owner},
		{"another user, mode 0644", 0o644, 0o1777, otherUser},
		{"root, mode 0400", 0o400, 0o700, &syscall.Credential{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := ownedQueue(t, owner, tt.mode, tt.dirMode)
			mustRunAs(t, tt.reader, command, "--db", path, "stats")
			if out := mustRunAs(t, tt.reader, command, "--db", path, "check"); !strings.HasSuffix(out, "\nok\n") {
				t.Errorf("check as uid %d:\n%s", tt.reader.Uid, out)
			}
			sideFilesLeft(t, path, "stats and check")
			if err := os.Chmod(path, tt.mode|0o600); err != nil {
				t.Fatal(err)
			}
			mustRunAs(t, owner, command, "--db", path, "enqueue", "send", `"after the read"`)
			if out := mustRunAs(t, owner, command, "--db", path, "check"); !strings.Contains(out, " 2 pending,") {
				t.Errorf("check after the enqueue:\n%s", out)
			}
		})
	}
}

// TestOpenReadOnly_WALWithoutSHM: a file of mode 0400 whose -wal holds a
// commit and has no -shm beside it (copied without it, say) cannot be read
// without making a -shm, which its owner could not write: stats refuses
// it, saying so, and makes none.
func TestOpenReadOnly_WALWithoutSHM(t *testing.T) {
	fileOnly(t, "the files beside the database")
	t.Parallel()
	command, owner := fileUsers(t)
	shell := sqlite3Shell(t)
	path := ownedQueue(t, owner, 0o600, 0o700)
	mustRunAs(t, owner, shell, path, ".dbconfig no_ckpt_on_close on", "CREATE TABLE app_notes (note TEXT)")
	if err := os.Remove(path + "-shm"); err != nil {
		t.Fatalf("the sqlite3 shell left no -shm: %v", err)
	}
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	out, err := runAs(t, owner, command, "--db", path, "stats")
	if want := "its -wal has no -shm beside it"; err == nil || !strings.Contains(out, want) {
		t.Errorf("stats: %v; want a refusal saying %q:\n%s", err, want, out)
	}
	if _, err := os.Stat(path + "-shm"); err == nil {
		t.Errorf("the refused stats made %s-shm", path)
	}
}

// TestOpen_UnwritableSideFiles: a -wal or -shm that the database file's
// owner cannot write, as a read by a user who may not write the file
// leaves them (here the sqlite3 shell's, as litequeue's did before it read
// such a file as a snapshot), is a problem for check, which names the
// file, its mode and owner and the fix; and the owner's writes are
// refused at open with the same words, not with SQLite's "attempt to
// write a readonly database".
func TestOpen_UnwritableSideFiles(t *testing.T) {
	fileOnly(t, "the files beside the database")
	t.Parallel()
	command, owner := fileUsers(t)
	shell := sqlite3Shell(t)
	for _, tt := range []readCase{
		{"mode 0400", 0o400, 0o700, owner},
		{"another user's", 0o644, 0o1777, otherUser},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := ownedQueue(t, owner, tt.mode, tt.dirMode)
			mustRunAs(t, tt.reader, shell, path, "SELECT count(*) FROM litequeue_jobs")
			shm, err := os.Stat(path + "-shm")
			if err != nil {
				t.Fatalf("the sqlite3 shell left no -shm: %v", err)
			}
			want := fmt.Sprintf("%s-shm has mode %04o and owner uid %d: ", path, shm.Mode().Perm(), tt.reader.Uid)
			fix := fmt.Sprintf(" cannot write it, and every write fails: chown %d %s-shm && chmod 600 %[2]s-shm", owner.Uid, path)
			if err := os.Chmod(path, 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := runAs(t, owner, command, "--db", path, "check")
			if err == nil || !strings.Contains(out, want+fmt.Sprintf("the database file's owner (uid %d)", owner.Uid)+fix) {
				t.Errorf("check as the owner: %v; want it to fail, saying %q … %q:\n%s", err, want, fix, out)
			}
			out, err = runAs(t, owner, command, "--db", path, "enqueue", "send")
			if err == nil || !strings.Contains(out, want+fmt.Sprintf("this process (uid %d)", owner.Uid)+fix) {
				t.Errorf("enqueue as the owner: %v; want it refused, saying %q … %q:\n%s", err, want, fix, out)
			}
		})
	}
}
