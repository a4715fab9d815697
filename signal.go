package litequeue

import "sync"

// signal wakes every goroutine waiting on it at once, each time it fires:
// the wake-up of a Queue's idle Work loops for an Enqueue, a Handle, or a
// commit of its writer that made work claimable. The zero value is not
// ready: use newSignal.
type signal struct {
	mu sync.RWMutex
	ch chan struct{} // closed and replaced by fire
}

func newSignal() *signal { return &signal{ch: make(chan struct{})} }

// fire wakes every goroutine that waits on a channel wait returned.
func (s *signal) fire() {
	s.mu.Lock()
	close(s.ch)
	s.ch = make(chan struct{})
	s.mu.Unlock()
}

// wait returns the channel the next fire closes. A waiter takes it before
// it looks for work, so that no fire after the look is missed.
func (s *signal) wait() <-chan struct{} {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ch
}
