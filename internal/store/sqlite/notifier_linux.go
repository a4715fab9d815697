package sqlite

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// fileNotifications says that Work learns of other processes' writes from
// the file system (see notifier.go): inotify watches the directory without
// opening its files.
const fileNotifications = true

// A dirWatch is an inotify instance with one watch, of a directory, which
// passes on each change of a file in it as the file's base name. Turned
// off (watch(false)), the watch stays, with a mask that leaves out the
// files' changes: the kernel makes no event for a write then, and keeps
// those it queued before. The notifier turns its watch off and on at
// every transaction of the Queue's writer (see notifiers); removing the
// watch and adding it again instead would queue an event of its own
// (IN_IGNORED) each time, which wakes the reader.
type dirWatch struct {
	f      *os.File // the instance, non-blocking: a read waits in the runtime's poller
	dir    string
	wd     int         // the watch's descriptor in f
	events chan string // the base name of a file that changed
	errors chan error  // the kernel's queue overflowed, or a read failed
	done   chan struct{}
	once   sync.Once
}

// The mask of a watch on and off. Off, it still tells of the directory's
// own removal, after which the kernel ends the watch (IN_IGNORED).
const (
	dirChanges = unix.IN_MODIFY | unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO
	dirOff     = unix.IN_ONLYDIR | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF
)

// readSize is how many bytes the reader reads at once: 64 events with
// the longest names.
const readSize = 64 * (unix.SizeofInotifyEvent + unix.NAME_MAX + 1)

// errOverflow says that the kernel's queue of events overflowed: changes
// may have gone untold.
var errOverflow = errors.New("inotify: queue overflow")

// watchDir starts a watch of dir, on.
func watchDir(dir string) (*dirWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	w := &dirWatch{f: os.NewFile(uintptr(fd), "inotify"), dir: dir, wd: -1,
		events: make(chan string), errors: make(chan error), done: make(chan struct{})}
	if err := w.watch(true); err != nil {
		w.f.Close()
		return nil, err
	}
	go w.read()
	return w, nil
}

// errMoved says that the directory at the watch's path is not the one it
// watches: the watched one was moved away, or removed and made again.
var errMoved = errors.New("the directory is not the one watched")

// watch turns the watch on or off (see dirWatch). It fails once the watch
// is closed, or if dir is gone or another directory (errMoved).
func (w *dirWatch) watch(on bool) error {
	mask := uint32(dirOff)
	if on {
		mask |= dirChanges
	}
	rc, err := w.f.SyscallConn()
	if err != nil {
		return err
	}
	wd, werr := -1, error(nil)
	if err := rc.Control(func(fd uintptr) { wd, werr = unix.InotifyAddWatch(int(fd), w.dir, mask) }); err != nil {
		return err
	}
	switch {
	case werr != nil:
	case w.wd < 0:
		w.wd = wd // before read starts
	case wd != w.wd:
		werr = errMoved
	}
	if werr != nil {
		return &os.PathError{Op: "inotify_add_watch", Path: w.dir, Err: werr}
	}
	return nil
}

// read passes on the events until the watch is closed, the kernel ends it
// (the directory was removed) or a read fails, and then closes events and
// errors.
func (w *dirWatch) read() {
	defer close(w.errors)
	defer close(w.events)
	buf := make([]byte, readSize)
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			if !errors.Is(err, os.ErrClosed) {
				w.fail(err)
			}
			return
		}
		for ev := buf[:n]; len(ev) >= unix.SizeofInotifyEvent; {
			wd := int(int32(binary.NativeEndian.Uint32(ev[0:])))
			mask := binary.NativeEndian.Uint32(ev[4:])
			size := unix.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(ev[12:]))
			name := ev[unix.SizeofInotifyEvent:min(size, len(ev))]
			ev = ev[min(size, len(ev)):]
			switch {
			case mask&unix.IN_Q_OVERFLOW != 0:
				if !w.fail(errOverflow) {
					return
				}
			case mask&unix.IN_IGNORED != 0 && wd == w.wd:
				return // the directory was removed
			case len(name) > 0 && wd == w.wd:
				if i := bytes.IndexByte(name, 0); i >= 0 {
					name = name[:i]
				}
				select {
				case w.events <- string(name):
				case <-w.done:
					return
				}
			}
		}
	}
}

// fail passes err on, and reports false if the watch was closed meanwhile.
func (w *dirWatch) fail(err error) bool {
	select {
	case w.errors <- err:
		return true
	case <-w.done:
		return false
	}
}

// close ends the watch and its reader. It may be called more than once.
func (w *dirWatch) close() error {
	var err error
	w.once.Do(func() {
		close(w.done)
		err = w.f.Close()
	})
	return err
}
