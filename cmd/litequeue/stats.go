package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/litequeue/litequeue"
)

// statsJSON is the output of "stats --json". Durations are in
// milliseconds.
type statsJSON struct {
	Queues          map[string]queueStatsJSON `json:"queues"`
	RetriesLastHour []errorCountJSON          `json:"retries_last_hour"`
	DeathsLastHour  map[string]int            `json:"deaths_last_hour"` // per kind
	// DeathsByClassLastHour is per kind and error class.
	DeathsByClassLastHour []errorCountJSON `json:"deaths_by_class_last_hour"`
	Paused                []pauseJSON      `json:"paused,omitempty"` // absent: nothing is paused
	// Breakers are the circuit breakers that are not closed, per kind.
	Breakers map[string]breakerJSON `json:"breakers,omitempty"`
}

// breakerJSON is a circuit breaker that is not closed, in "stats --json".
type breakerJSON struct {
	State    string    `json:"state"`
	OpenedAt time.Time `json:"opened_at"`
	Until    time.Time `json:"until"`
	Trips    int       `json:"trips"`
}

// queueStatsJSON is one queue's counts in "stats --json".
type queueStatsJSON struct {
	Due         int    `json:"due"`
	Scheduled   int    `json:"scheduled"`
	Waiting     int    `json:"waiting"`
	Running     int    `json:"running"`
	Dead        int    `json:"dead"`
	Completed   int    `json:"completed"`
	Discarded   int    `json:"discarded"`
	Cancelled   int    `json:"cancelled"`
	Expired     int    `json:"expired"`
	OldestDueMS *int64 `json:"oldest_due_ms"` // null when none is due
}

// errorCountJSON is a count of retries or deaths in "stats --json".
type errorCountJSON struct {
	Kind       string `json:"kind"`
	ErrorClass string `json:"error_class"`
	Count      int    `json:"count"`
}

// stats defines the flags of "stats" and returns the command.
func (c *cli) stats(fs *flagSet) runFunc {
	asJSON := fs.jsonFlag()
	return func(ctx context.Context, _ []string) error {
		return c.read(func(q *litequeue.Queue) error { return c.showStats(ctx, q, *asJSON) })
	}
}

// showStats writes the figures of q's file, as tables or as JSON.
func (c *cli) showStats(ctx context.Context, q *litequeue.Queue, asJSON bool) error {
	st, err := q.Stats(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(c.stdout, toStatsJSON(st))
	}
	c.writeStats(st)
	return nil
}

// toStatsJSON returns the JSON form of st. It leaves out Unhandled: the
// command has no handlers, so every due kind would be in it.
func toStatsJSON(st litequeue.Stats) statsJSON {
	out := statsJSON{
		Queues:                make(map[string]queueStatsJSON, len(st.Queues)),
		RetriesLastHour:       errorCountsJSON(st.RetriesLastHour),
		DeathsLastHour:        st.DeathsLastHour,
		DeathsByClassLastHour: errorCountsJSON(st.DeathsByClassLastHour),
		Paused:                pausesJSON(st.Paused),
	}
	for name, s := range st.Queues {
		qs := queueStatsJSON{s.Due, s.Scheduled, s.Waiting, s.Running, s.Dead, s.Completed, s.Discarded, s.Cancelled, s.Expired, nil}
		if s.Due > 0 {
			oldest := s.OldestDue.Milliseconds()
			qs.OldestDueMS = &oldest
		}
		out.Queues[name] = qs
	}
	if out.DeathsLastHour == nil {
		out.DeathsLastHour = map[string]int{}
	}
	for kind, b := range st.Breakers {
		if out.Breakers == nil {
			out.Breakers = make(map[string]breakerJSON)
		}
		out.Breakers[kind] = breakerJSON{State: b.State, OpenedAt: b.OpenedAt, Until: b.Until, Trips: b.Trips}
	}
	return out
}

// errorCountsJSON is the JSON form of counts, never null.
func errorCountsJSON(counts []litequeue.ErrorCount) []errorCountJSON {
	out := make([]errorCountJSON, len(counts))
	for i, e := range counts {
		out[i] = errorCountJSON(e)
	}
	return out
}

// writeStats writes st as tables: the jobs of each queue by state, then
// the last hour's retries, and its deaths per kind and error class, and a
// line of what is paused, if anything is.
func (c *cli) writeStats(st litequeue.Stats) {
	w := c.stdout
	if len(st.Queues) == 0 {
		fmt.Fprintln(w, "no jobs")
	} else {
		tw := newTable(w)
		fmt.Fprintln(tw, "QUEUE\tDUE\tSCHEDULED\tWAITING\tRUNNING\tDEAD\tCOMPLETED\tDISCARDED\tCANCELLED\tEXPIRED\tOLDEST DUE")
		var all litequeue.QueueStats
		for _, name := range slices.Sorted(maps.Keys(st.Queues)) {
			s := st.Queues[name]
			writeQueueStats(tw, name, s)
			all.Due, all.Scheduled, all.Running, all.Dead = all.Due+s.Due, all.Scheduled+s.Scheduled, all.Running+s.Running, all.Dead+s.Dead
			all.Completed, all.Discarded, all.Cancelled = all.Completed+s.Completed, all.Discarded+s.Discarded, all.Cancelled+s.Cancelled
			all.Expired, all.Waiting = all.Expired+s.Expired, all.Waiting+s.Waiting
			all.OldestDue = max(all.OldestDue, s.OldestDue)
		}
		if len(st.Queues) > 1 {
			writeQueueStats(tw, "(all)", all)
		}
		tw.Flush()
	}

	writeErrorCounts(w, "retries", st.RetriesLastHour)
	writeErrorCounts(w, "deaths", st.DeathsByClassLastHour)
	writePaused(w, st.Paused)
	writeBreakers(w, st.Breakers)
}

// writeBreakers writes a line per circuit breaker that is not closed;
// nothing when all are.
func writeBreakers(w io.Writer, breakers map[string]litequeue.BreakerStats) {
	for _, kind := range slices.Sorted(maps.Keys(breakers)) {
		b := breakers[kind]
		fmt.Fprintf(w, "\nbreaker %s: %s since %s, cool-down until %s, %s\n",
			kind, b.State, fmtTime(b.OpenedAt), fmtTime(b.Until), plural(b.Trips, "trip"))
	}
}

// writeErrorCounts writes the last hour's counts of what (retries or
// deaths) per kind and error class.
func writeErrorCounts(w io.Writer, what string, counts []litequeue.ErrorCount) {
	fmt.Fprintf(w, "\n%s in the last hour", what)
	if len(counts) == 0 {
		fmt.Fprintln(w, ": none")
		return
	}
	fmt.Fprintln(w, ":")
	tw := newTable(w)
	fmt.Fprintf(tw, "  KIND\tERROR CLASS\t%s\n", strings.ToUpper(what))
	for _, e := range counts {
		fmt.Fprintf(tw, "  %s\t%s\t%d\n", e.Kind, orDash(e.ErrorClass), e.Count)
	}
	tw.Flush()
}

// writeQueueStats writes one row of the stats table.
func writeQueueStats(w io.Writer, name string, s litequeue.QueueStats) {
	oldest := "-"
	if s.Due > 0 {
		oldest = fmtAge(s.OldestDue)
	}
	fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n",
		name, s.Due, s.Scheduled, s.Waiting, s.Running, s.Dead, s.Completed, s.Discarded, s.Cancelled, s.Expired, oldest)
}
