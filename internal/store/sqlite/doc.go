// Package sqlite is litequeue's engine for one SQLite file in WAL mode
// (see store.Engine): it checks, creates and migrates the file, sets the
// pragmas of every connection, orders writers across processes with a
// flock, claims and inserts in the file's own SQL, notices the commits of
// other processes (inotify where there is one, data_version otherwise),
// checkpoints and vacuums, and copies the file for a backup.
package sqlite
