package litequeue

// fileNotifications says that Work learns of other processes' writes from
// the file system (see watch.go): inotify watches the directory without
// opening its files.
const fileNotifications = true
