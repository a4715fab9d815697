package litequeue

import "time"

// SetWatch sets how the Work calls that q starts from now on learn of
// other processes' writes: with the file system's notifications or
// without, and, if poll is above 0, how often they look on their own.
// For tests of the file's wake-ups only; it panics on another backend.
func SetWatch(q *Queue, notify bool, poll time.Duration) {
	e := q.eng.(*sqliteEngine)
	e.notifyOff, e.poll = !notify, poll
}
