package litequeue

import (
	"context"
	"fmt"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// WorkerSilentAfter is how long after its last record a worker is
// [WorkerInfo.Silent]: three heartbeats missed (see [WorkerHeartbeat]).
const WorkerSilentAfter = 3 * WorkerHeartbeat

// WorkerInfo is one [Queue.Work] loop at work on the database, of any
// process, as it last recorded itself (see [WorkerHeartbeat]).
type WorkerInfo struct {
	ID          string    // random, made when Work started
	Name        string    // [WorkerOptions.Name]: the name its history rows show
	Host        string    // the machine's host name
	PID         int       // the process's ID on that machine
	Queues      []string  // [WorkerOptions.Queues]; nil: every queue
	Kinds       []string  // the kinds with a handler on its Queue, sorted
	Concurrency int       // [WorkerOptions.Concurrency], resolved
	Running     int       // handlers running at LastSeen
	Started     time.Time // when Work started
	LastSeen    time.Time // its last record
	// Silent reports that LastSeen is more than WorkerSilentAfter before
	// the reading Queue's clock: the loop's process hangs, died, or lost
	// its way to the database. Rows a day silent are deleted.
	Silent bool
}

// Workers returns the [Queue.Work] loops at work on the database — of this
// Queue, of other Queues, of other processes and machines — those started
// first first. Each Work loop records itself when it starts and every
// [WorkerHeartbeat] (a minute) on its clock, and deletes its record when
// Work returns; a loop whose process died stays listed, [WorkerInfo.Silent]
// once its record is WorkerSilentAfter old on this Queue's clock, until
// the janitor of any Work or RunDue deletes it a day after its last
// record. [Queue.RunDue] records no worker. A Queue from [OpenReadOnly]
// reads the workers of the others, and records none; on a file that no
// binary which records its workers has opened to write, it finds none.
func (q *Queue) Workers(ctx context.Context) ([]WorkerInfo, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	if !q.st.info.Recorded {
		return nil, nil // no Work loop that records itself has opened the file
	}
	rows, err := store.Workers(ctx, q.st.reads)
	if err != nil {
		return nil, fmt.Errorf("litequeue: workers: %w", err)
	}
	now := q.now()
	infos := make([]WorkerInfo, len(rows))
	for i, r := range rows {
		seen := store.FromMS(r.LastSeen)
		infos[i] = WorkerInfo{ID: r.ID, Name: r.Name, Host: r.Host, PID: r.PID, Queues: r.Queues, Kinds: r.Kinds,
			Concurrency: r.Concurrency, Running: r.Running, Started: store.FromMS(r.Started), LastSeen: seen,
			Silent: now.Sub(seen) > WorkerSilentAfter}
	}
	return infos, nil
}
