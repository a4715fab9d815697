//go:build !linux

package litequeue

// fileNotifications is false: kqueue opens every file of a watched
// directory, and closing those descriptors would drop SQLite's fcntl locks
// (see watch.go), so Work polls every pollInterval.
const fileNotifications = false
