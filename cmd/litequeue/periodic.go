package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/litequeue/litequeue"
)

// periodicJSON is one schedule in "periodic list --json". Times are in
// RFC 3339, UTC; null for none.
type periodicJSON struct {
	Name         string     `json:"name"`
	Spec         string     `json:"spec"`
	Kind         string     `json:"kind"`
	Queue        string     `json:"queue"`
	Location     string     `json:"location"`
	Missed       string     `json:"missed"` // "one" or "skip"
	LastSlot     time.Time  `json:"last_slot"`
	LastSkipped  bool       `json:"last_skipped"`
	LastJobID    int64      `json:"last_job_id"` // 0: none yet
	LastFired    *time.Time `json:"last_fired"`
	NextSlot     *time.Time `json:"next_slot"`
	RegisteredAt time.Time  `json:"registered_at"`
}

// periodicList defines the flags of "periodic list" and returns the
// command.
func (c *cli) periodicList(fs *flagSet) runFunc {
	name := fs.String("name", "", "only the schedule of this `name`")
	asJSON := fs.jsonFlag()
	return func(ctx context.Context, _ []string) error {
		var infos []litequeue.PeriodicInfo
		err := c.read(func(q *litequeue.Queue) error {
			var err error
			infos, err = q.Periodics(ctx)
			return err
		})
		if err != nil {
			return err
		}
		if *name != "" {
			infos = slices.DeleteFunc(infos, func(p litequeue.PeriodicInfo) bool { return p.Name != *name })
		}
		if *asJSON {
			return writeJSON(c.stdout, periodicsJSON(infos))
		}
		c.periodicTable(infos)
		return nil
	}
}

// periodicsJSON is the JSON form of infos, never null.
func periodicsJSON(infos []litequeue.PeriodicInfo) []periodicJSON {
	out := make([]periodicJSON, len(infos))
	for i, p := range infos {
		out[i] = periodicJSON{
			Name: p.Name, Spec: p.Spec, Kind: p.Kind, Queue: p.Queue, Location: p.Location,
			Missed: string(p.Missed), LastSlot: p.LastSlot.UTC(), LastSkipped: p.LastSkipped,
			LastJobID: p.LastJobID, LastFired: timeOrNull(p.LastFired), NextSlot: timeOrNull(p.NextSlot),
			RegisteredAt: p.RegisteredAt.UTC(),
		}
	}
	return out
}

// timeOrNull is t in UTC, or nil for the zero time.
func timeOrNull(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// periodicTable writes the schedules as a table.
func (c *cli) periodicTable(infos []litequeue.PeriodicInfo) {
	if len(infos) == 0 {
		fmt.Fprintln(c.stdout, "no periodic jobs")
		return
	}
	tw := newTable(c.stdout)
	fmt.Fprintln(tw, "NAME\tSPEC\tKIND\tQUEUE\tLOCATION\tMISSED\tLAST SLOT\tLAST JOB\tNEXT SLOT")
	for _, p := range infos {
		last, job := fmtTime(p.LastSlot), "-"
		if p.LastSkipped {
			last += " (skipped)"
		}
		if p.LastJobID != 0 {
			job = fmt.Sprint(p.LastJobID)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			p.Name, p.Spec, p.Kind, p.Queue, p.Location, p.Missed, last, job, fmtTime(p.NextSlot))
	}
	tw.Flush()
}
