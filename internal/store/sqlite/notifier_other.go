//go:build !linux

package sqlite

import "errors"

// fileNotifications is false: kqueue opens every file of a watched
// directory, and closing those descriptors would drop SQLite's fcntl locks
// (see notifier.go), so Work polls every store.PollInterval.
const fileNotifications = false

// A dirWatch is inotify's (see watch_linux.go); here none starts.
type dirWatch struct {
	dir    string
	events chan string
	errors chan error
}

func watchDir(string) (*dirWatch, error) { return nil, errors.ErrUnsupported }

func (*dirWatch) watch(bool) error { return errors.ErrUnsupported }

func (*dirWatch) close() error { return nil }
