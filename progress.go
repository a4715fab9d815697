package litequeue

import "context"

// progressKey is the context key of WithProgress.
type progressKey struct{}

// WithProgress returns a copy of ctx that carries fn, which the long
// operations called with it call as they go, with how many of their jobs
// they have done and how many they have to do in all: [Copy] after each
// job it writes, [Queue.ReplayDead], [Queue.ReplayTallied],
// [Queue.PurgeTallied], [Queue.CancelTallied] and [Queue.DeleteTallied]
// after each of their transactions. A job left alone (no longer in the
// state the operation acts on) counts as done. fn is called on the
// operation's goroutine, and must return quickly; a transaction that is
// run again after a conflict may report a count again. It is a context
// value, as net/http/httptrace's hooks are, so that the operations keep
// their signatures.
func WithProgress(ctx context.Context, fn func(done, total int)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// progress calls the function of WithProgress in ctx, if any.
func progress(ctx context.Context, done, total int) {
	if fn, ok := ctx.Value(progressKey{}).(func(done, total int)); ok && fn != nil {
		fn(done, total)
	}
}
