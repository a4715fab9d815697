// Command litequeue inspects and repairs a litequeue database while the app
// keeps running on it: stats, lists, a job's whole history, dead letters
// and their replay, cancel, enqueue, the retry schedule of a policy and a
// simulation of what its jitter does to a dependency, an integrity check,
// and a self-contained demo for newcomers.
//
// Reads go through a read-only connection; writes through the library's
// own write path, so they are safe beside running workers. Run
// "litequeue help" for the commands.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
