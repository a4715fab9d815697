package litequeue

import "time"

// recording says when a Queue's handled kinds are to be recorded again:
// at once when a kind gained a handler since the last record (or there was
// none), or the clock went back past it; else a period after it. The
// heartbeat of each Work loop (every WorkerHeartbeat, see heartbeat.go)
// and the handled kinds (every recordEvery, see handled.go) keep one each.
type recording struct {
	kinds    int       // how many kinds the last record wrote
	at, next time.Time // when it was written, and when the next is due; zero: none yet
}

// due returns when the next record is due, at now, with kinds handled.
func (r *recording) due(kinds int, now time.Time) time.Time {
	if kinds != r.kinds || now.Before(r.at) {
		return now
	}
	return r.next
}

// wrote notes a record of kinds written at now; the next is due every
// after it.
func (r *recording) wrote(kinds int, now time.Time, every time.Duration) {
	r.kinds, r.at, r.next = kinds, now, now.Add(every)
}
