package litequeue

import (
	"log/slog"
	"sync"
	"time"

	"github.com/litequeue/litequeue/internal/store"
)

// The events a Queue fires, by Type: OnEvent is called with each after the
// commit of the change it reports (see Options.OnEvent).
const (
	eventEnqueued  = "job.enqueued"
	eventStarted   = "job.started"
	eventCompleted = "job.completed"
	eventRetry     = "job.retry"
	eventSnoozed   = "job.snoozed"
	eventDead      = "job.dead"
	eventDiscarded = "job.discarded"
	eventCancelled = "job.cancelled"
	eventReplayed  = "job.replayed"
	eventRunNow    = "job.run_now"
	eventDeleted   = "job.deleted"
	eventExpired   = "job.expired"

	// A kind's circuit breaker opened (see Breaker): Job is the run that
	// opened it, Err its failure, Delay the cool-down. Closed: Job is the
	// probe that completed.
	eventBreakerOpened = "job.breaker_opened"
	eventBreakerClosed = "job.breaker_closed"
)

// Event reports one committed state change to [Options.OnEvent].
type Event struct {
	Type  string        // "job.enqueued", "job.started", "job.completed", "job.retry", …
	Job   Job           // the job as it is after the change
	Err   string        // the error of a failed run, if any
	Delay time.Duration // the wait before a retry or after a snooze
	At    time.Time     // when the change committed, on the injected clock
}

// An emitter calls Options.OnEvent for the events of committed changes,
// one call at a time, after the commit and before the call that caused
// them returns.
type emitter struct {
	on     func(Event) // nil: no events are made
	logger *slog.Logger
	mu     sync.Mutex // held while OnEvent runs
}

// enqueued fires the job.enqueued events of jobs inserted at now; a
// duplicate (UniqueKey) was not, and fires none.
func (e *emitter) enqueued(now time.Time, jobs ...*Job) {
	if e.on == nil {
		return
	}
	events := make([]Event, 0, len(jobs))
	for _, j := range jobs {
		if !j.Duplicate {
			events = append(events, Event{Type: eventEnqueued, Job: j.asStored(), At: now})
		}
	}
	e.emit(events...)
}

// dependentsCancelled fires the job.cancelled events of the jobs whose
// rows a write cancelled because a dependency failed (see DependsOn), at
// the moment each was cancelled.
func (e *emitter) dependentsCancelled(rows []store.JobRow) {
	if e.on == nil {
		return
	}
	events := make([]Event, len(rows))
	for i := range rows {
		events[i] = Event{Type: eventCancelled, Job: viewOf(&rows[i]), At: store.FromMS(rows[i].FinishedAt.Int64)}
	}
	e.emit(events...)
}

// asStored returns j with its payload as stored: an event's job.
func (j *Job) asStored() Job {
	v := *j
	if v.opened != nil && v.opened.stored != nil {
		v.Payload, v.opened = v.opened.stored, nil
	}
	return v
}

// onEventWait is how long emit waits for an OnEvent call in progress
// before it warns that OnEvent may be calling the Queue.
const onEventWait = 10 * time.Second

// emit calls OnEvent for each event, one call at a time, recovering and
// logging a panic so that it never breaks a worker.
func (e *emitter) emit(events ...Event) {
	if e.on == nil || len(events) == 0 {
		return
	}
	if !e.mu.TryLock() {
		// Real time, not the injected clock: this is a wait on a goroutine.
		// The warning holds the first event's type and job, not events,
		// which so stays where the caller made it (no allocation).
		typ, job := events[0].Type, events[0].Job.ID
		slow := time.AfterFunc(onEventWait, func() {
			e.logger.Warn("litequeue: an event has waited 10s for OnEvent to return; "+
				"an OnEvent that calls Enqueue, Cancel, Replay, RunDue or Close waits for itself",
				"event", typ, "job", job)
		})
		e.mu.Lock()
		slow.Stop()
	}
	defer e.mu.Unlock()
	for _, ev := range events {
		e.call(ev)
	}
}

// call calls OnEvent for one event, recovering and logging a panic.
func (e *emitter) call(ev Event) {
	defer func() {
		if r := recover(); r != nil {
			e.logger.Error("litequeue: OnEvent panicked", "event", ev.Type, "job", ev.Job.ID, "panic", r)
		}
	}()
	e.on(ev)
}
