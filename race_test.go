//go:build race

package litequeue_test

// race reports whether the race detector is on: under it, the transpiled
// SQLite runs about fifteen times slower, and bulk tests shrink.
const race = true
