package litequeue_test

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/litequeue/litequeue"
)

// ExamplePolicy prints the worst-case schedule of the default policy: the
// longest wait before each retry, and the longest time from the first
// failure until that retry. Full jitter spreads each actual wait anywhere
// between zero and the longest.
func ExamplePolicy() {
	p := litequeue.DefaultPolicy()
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "retry\tmax wait\tworst case total")
	for _, s := range p.Schedule() {
		fmt.Fprintf(tw, "%d\t%v\t%v\n", s.Retry, s.MaxWait, s.Total)
	}
	tw.Flush()
	fmt.Printf("%d tries, then the job is dead\n", p.MaxTries)
	// Output:
	// retry  max wait  worst case total
	// 1      2s        2s
	// 2      4s        6s
	// 3      8s        14s
	// 4      16s       30s
	// 5      32s       1m2s
	// 6      1m4s      2m6s
	// 7      2m8s      4m14s
	// 8 tries, then the job is dead
}
