//go:build race

package main

// raceEnabled: the race detector slows the SQLite driver (C translated to
// Go) many times over, so the tests do not hold runs to a rate.
const raceEnabled = true
