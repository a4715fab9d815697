package store

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// TurnWait is how long a write waits for a WriteTx that holds the write
// lock before it fails: as long as SQLite's busy timeout lets a connection
// wait for another's write lock (see store/sqlite).
const TurnWait = 10 * time.Second

// Turn orders, within one process, a Queue's writes that take the
// write lock: the writer's commits and the app's WriteTx. One write holds
// the turn at a time and the others wait in line (a channel serves its
// waiting senders in order); the holder then takes the file lock, which
// orders it with the writers of other processes. A write waits for a
// WriteTx that holds the turn for at most TurnWait (see Take). The zero
// value is ready to use.
type Turn struct {
	once sync.Once
	ch   chan struct{} // holds a value while the turn is taken

	mu      sync.Mutex
	appFrom time.Time // when the WriteTx holding the turn began; zero if none
}

func (t *Turn) c() chan struct{} {
	t.once.Do(func() { t.ch = make(chan struct{}, 1) })
	return t.ch
}

// Take waits for the turn until ctx is done, or until a WriteTx has held
// it for TurnWait: a WriteTx whose fn makes a write that takes no
// transaction waits for itself, and this turns the hang into an error.
// The wait is on real time, not the injected clock: it waits for another
// goroutine.
func (t *Turn) Take(ctx context.Context) error {
	select {
	case t.c() <- struct{}{}:
		return nil
	default:
	}
	wait := time.NewTimer(TurnWait)
	defer wait.Stop()
	for {
		select {
		case t.c() <- struct{}{}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-wait.C:
			held := t.appHeld()
			if held >= TurnWait {
				return fmt.Errorf("a WriteTx has held the write lock for %v, past the %v a write waits for one "+
					"(does its fn make a write that takes no transaction, such as Enqueue, or begin another WriteTx?)",
					held.Round(time.Millisecond), TurnWait)
			}
			wait.Reset(TurnWait - held)
		}
	}
}

// AppBegan records that the turn's holder is a WriteTx whose transaction
// has just begun.
func (t *Turn) AppBegan() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.appFrom = time.Now()
}

// appHeld returns how long the WriteTx holding the turn has held it since
// it began its transaction; 0 if no WriteTx holds it.
func (t *Turn) appHeld() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.appFrom.IsZero() {
		return 0
	}
	return time.Since(t.appFrom)
}

// Give hands the turn to the next write in line.
func (t *Turn) Give() {
	t.mu.Lock()
	t.appFrom = time.Time{}
	t.mu.Unlock()
	<-t.c()
}
