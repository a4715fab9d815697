// Command schedule prints litequeue's default retry schedule: the longest
// wait before each retry of a failed job, and the longest time from the
// first failure to that retry.
package main

import (
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/litequeue/litequeue"
)

func main() {
	p := litequeue.DefaultPolicy()
	fmt.Printf("Default retry policy: %s from %v, capped at %v, %d tries, %s jitter.\n\n",
		p.Backoff, p.Base, p.Ceiling, p.MaxTries, p.Jitter)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "retry\tmax wait\tworst case total")
	var total time.Duration
	for _, s := range p.Schedule() {
		fmt.Fprintf(tw, "%d\t%v\t%v\n", s.Retry, s.MaxWait, s.Total)
		total = s.Total
	}
	fmt.Fprintf(tw, "total\t%v\n", total)
	tw.Flush()
}
