// Package store is everything on a byte's way to disk for litequeue: the
// contract of an engine (the database behind a Queue: the file or a
// server), the rows as stored and their scanning, the group-commit writer,
// the dialect that turns the one SQL text into each engine's, and every
// SQL statement beside the operation that runs it.
//
// The package knows nothing of the decisions: what follows a run, which
// kinds a claim may take, when a job is retried. The root package decides
// and tells the store what to write; the store writes it. One engine per
// backend lives in a package of its own below this one (store/sqlite,
// store/postgres), so that a program that uses only the file links no
// PostgreSQL code.
//
// Times are int64 Unix milliseconds here and nowhere else: the root
// converts at the boundary (see MS and FromMS).
package store
