package litequeue

import (
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// A lease is a worker's claim on one running job. Its fencing token is the
// job's token at claim time: every later write by the holder checks it, so a
// holder whose lease expired (and whose job another worker rescued and
// claimed again) changes nothing and gets ErrLeaseLost.
//
// At claim time the worker writes what a rescuer needs should the run be
// lost — the effective MaxTries and the delay to apply (retry_delay) — so
// any process can rescue the job without knowing its handler or policy. The
// same delay is applied if the run fails by returning an error (see
// decide).
type lease struct {
	row     store.JobRow // the job's row as claimed: still its row while the lease holds
	job     *Job
	h       *handler
	started time.Time
	worker  string
	// renewNow, sent to without blocking, asks the run to renew its lease
	// at once rather than at its next turn: Cancel in this Queue uses it so
	// that the run sees the request without waiting for the renewal.
	renewNow chan struct{}
	// unopened, if not nil, says why the job's sealed payload did not
	// open: its handler is not called, and the run fails for good.
	unopened error
}

// claimer says which jobs a worker takes, and the name it records.
type claimer struct {
	queues []string // nil: every queue
	worker string
}

// A runNote is what a run's end carries through the writer's settle for
// the runner (see store.RunEnd.Note): the run's job and end, to decide
// again if the job's row changed, the worker's ask for its next job, and
// what the settle's steps found for it. The steps set it afresh at each
// try of the batch.
type runNote struct {
	job       *Job
	end       end
	redecided *decision // the end decided again on the row as it is (see runner.Redecide)
	next      *claimer  // nil: no next job
	chained   *lease    // the next job, claimed with the end, if one was due
	at        time.Time // when it was claimed
	expired   []Event   // of the jobs the claim expired first (see expireDue)
	gated     []Event   // the gate's, of the stored end (see gate.ran)
}
