package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/litequeue/litequeue"
)

// workerJSON is one worker in "workers --json". Times are in RFC 3339,
// UTC; queues is [] for every queue.
type workerJSON struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Host        string    `json:"host"`
	PID         int       `json:"pid"`
	Queues      []string  `json:"queues"`
	Kinds       []string  `json:"kinds"`
	Concurrency int       `json:"concurrency"`
	Running     int       `json:"running"`
	Started     time.Time `json:"started"`
	LastSeen    time.Time `json:"last_seen"`
	Silent      bool      `json:"silent"`
}

// workers defines the flags of "workers" and returns the command.
func (c *cli) workers(fs *flagSet) runFunc {
	asJSON := fs.jsonFlag()
	return func(ctx context.Context, _ []string) error {
		var infos []litequeue.WorkerInfo
		err := c.read(func(q *litequeue.Queue) error {
			var err error
			infos, err = q.Workers(ctx)
			return err
		})
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(c.stdout, workersJSON(infos))
		}
		c.workersTable(infos)
		return nil
	}
}

// workersJSON is the JSON form of infos, never null.
func workersJSON(infos []litequeue.WorkerInfo) []workerJSON {
	out := make([]workerJSON, len(infos))
	for i, w := range infos {
		out[i] = workerJSON{
			ID: w.ID, Name: w.Name, Host: w.Host, PID: w.PID, Queues: orEmpty(w.Queues), Kinds: orEmpty(w.Kinds),
			Concurrency: w.Concurrency, Running: w.Running, Started: w.Started.UTC(), LastSeen: w.LastSeen.UTC(),
			Silent: w.Silent,
		}
	}
	return out
}

// orEmpty is names, or an empty list for none.
func orEmpty(names []string) []string {
	if names == nil {
		return []string{}
	}
	return names
}

// workersTable writes the workers as a table: the silent ones marked,
// each last sighting with its age on the command's clock.
func (c *cli) workersTable(infos []litequeue.WorkerInfo) {
	if len(infos) == 0 {
		fmt.Fprintln(c.stdout, "no workers")
		return
	}
	now := time.Now()
	if c.clock != nil {
		now = c.clock.Now()
	}
	tw := newTable(c.stdout)
	fmt.Fprintf(tw, "ID\tNAME\tHOST\tPID\tQUEUES\tKINDS\tRUNNING\tSTARTED\tLAST SEEN\t%s\n", c.paintCell(bold, "STATUS"))
	for _, w := range infos {
		queues, status, color := "(all)", "live", green
		if len(w.Queues) > 0 {
			queues = strings.Join(w.Queues, ",")
		}
		if w.Silent {
			status, color = "silent", red
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%d/%d\t%s\t%s (%s ago)\t%s\n",
			w.ID, w.Name, w.Host, w.PID, queues, strings.Join(w.Kinds, ","), w.Running, w.Concurrency,
			fmtTime(w.Started), fmtTime(w.LastSeen), fmtAge(now.Sub(w.LastSeen)), c.paintCell(color, status))
	}
	tw.Flush()
	fmt.Fprintf(c.stdout, "silent: not seen for over %s (a worker records itself every %s)\n",
		fmtAge(litequeue.WorkerSilentAfter), fmtAge(litequeue.WorkerHeartbeat))
}
