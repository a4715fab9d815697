package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWrite_NotWritable runs commands that write on a file this process
// may not write: a read-only mount as root (whom modes do not stop), else
// a file of mode 0400. Each refuses in the command's words, saying which
// commands can read the file, not the library's ("OpenReadOnly can
// inspect it"); copy says the same of its --to.
func TestWrite_NotWritable(t *testing.T) {
	fx := newFixture(t)
	dir := filepath.Dir(fx.path)
	cause := "permission denied"
	if os.Geteuid() == 0 {
		if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
			t.Skipf("bind-mount %s: %v", dir, err)
		}
		t.Cleanup(func() {
			if err := syscall.Unmount(dir, 0); err != nil {
				t.Errorf("unmount %s: %v", dir, err)
			}
		})
		if err := syscall.Mount("", dir, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
			t.Fatalf("remount %s read-only: %v", dir, err)
		}
		cause = "read-only file system"
	} else if err := os.Chmod(fx.path, 0o400); err != nil {
		t.Fatal(err)
	}
	from := filepath.Join(t.TempDir(), "from.db")
	mustRun(t, fx.cli(""), "backup", "--to", from)
	want := "this process may not write " + fx.path + " (" + cause + "): stats, list, show, dead list and check only read it"
	for _, args := range [][]string{
		{"cancel", "5"},
		{"enqueue", "email.send"},
		{"pause", "--queue", "reports"},
		{"copy", "--from", from, "--to", fx.path},
	} {
		r := runCLI(t, fx.cli(""), args...)
		if r.code != exitFailure || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "Open") {
			t.Errorf("litequeue %s: exit %d, stderr %q; want exit 1 saying %q", strings.Join(args, " "), r.code, r.stderr, want)
		}
	}
	mustRun(t, fx.cli(""), "stats")
}
