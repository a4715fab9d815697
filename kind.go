package litequeue

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/jmoiron/sqlx"
)

// Kind is a kind of job bound to the Go type of its payload, T: its name
// and T are written once, where it is declared, and the compiler refuses a
// payload of another type wherever a job of the kind is made or handled.
//
//	var welcome = litequeue.NewKind[Email]("email.welcome")
//
//	welcome.Handle(q, func(ctx context.Context, job *litequeue.Job, e Email) error { … })
//	job, err := welcome.Enqueue(ctx, q, Email{To: "ada@example.com"})
//
// A Kind is a name and nothing more: it holds no Queue and no state, so
// one declared at package level serves every Queue, and copies of it are
// the same kind. Its methods are those of the string API ([Queue.Handle],
// [Queue.Enqueue], [Queue.EnqueueTx], [Queue.EnqueueMany],
// [Queue.Periodic]), with the same checks, errors and events, and its jobs
// are jobs like any other: a job enqueued with the string API under the
// kind's name, with the payload a T encodes to, is read by [Kind.Args] and
// run by Kind.Handle alike, and the other way round.
//
// A payload is encoded as the string API encodes a value of type T: as
// JSON, except that a T of []byte or [json.RawMessage] is stored byte for
// byte, and is read back so too. The zero Kind has no name: Handle panics
// on it and Enqueue refuses it; make a Kind with [NewKind].
type Kind[T any] struct {
	name string
}

// NewKind returns the kind of the given name whose payloads are of type T.
// It panics, as [Queue.Handle] does, on a name that is not a name (see
// [NameLimit]): a mistake in the program, found when it starts.
func NewKind[T any](name string) Kind[T] {
	mustBeKind("NewKind", name)
	return Kind[T]{name: name}
}

// Name returns the kind's name, as its jobs carry it in [Job.Kind].
func (k Kind[T]) Name() string { return k.name }

// Handle registers fn as the handler of the kind on q, as [Queue.Handle]
// does, with the same options and panics. fn is given each job's payload
// decoded as T; a payload that does not decode is a [Permanent] failure,
// as with [JSON]: the job is dead at once, with the error of [Kind.Args]
// in its history.
func (k Kind[T]) Handle(q *Queue, fn func(ctx context.Context, job *Job, args T) error, opts ...HandlerOption) {
	if fn == nil {
		q.Handle(k.name, nil, opts...) // panics, naming the kind
		return
	}
	q.Handle(k.name, func(ctx context.Context, job *Job) error {
		args, err := k.Args(job)
		if err != nil {
			return Permanent(err)
		}
		return fn(ctx, job, args)
	}, opts...)
}

// Enqueue adds a job of the kind with payload args, as [Queue.Enqueue]
// does.
func (k Kind[T]) Enqueue(ctx context.Context, q *Queue, args T, opts ...EnqueueOption) (*Job, error) {
	return q.Enqueue(ctx, k.name, args, opts...)
}

// EnqueueTx adds a job of the kind with payload args inside the caller's
// transaction tx, begun on [Queue.DB], as [Queue.EnqueueTx] does: the job
// exists if and only if the caller commits.
func (k Kind[T]) EnqueueTx(ctx context.Context, q *Queue, tx *sqlx.Tx, args T, opts ...EnqueueOption) (*Job, error) {
	return q.EnqueueTx(ctx, tx, k.name, args, opts...)
}

// EnqueueMany adds one job of the kind per element of args, all with the
// same options, in one transaction, as [Queue.EnqueueMany] does: all are
// added or none.
func (k Kind[T]) EnqueueMany(ctx context.Context, q *Queue, args []T, opts ...EnqueueOption) ([]*Job, error) {
	payloads := make([]any, len(args))
	for i, a := range args {
		payloads[i] = a
	}
	return q.EnqueueMany(ctx, k.name, payloads, opts...)
}

// Periodic registers the schedule name, which makes a job of the kind with
// payload args at each slot of spec, as [Queue.Periodic] does.
func (k Kind[T]) Periodic(ctx context.Context, q *Queue, name, spec string, args T, opts ...PeriodicOption) error {
	return q.Periodic(ctx, name, spec, k.name, args, opts...)
}

// Args returns job's payload decoded as T. It returns an error naming both
// kinds if job is of another kind, and one naming the job's ID, its kind
// and T if the payload does not decode.
func (k Kind[T]) Args(job *Job) (T, error) {
	var args T
	if job.Kind != k.name {
		return args, fmt.Errorf("litequeue: job %d is of kind %q, not %q", job.ID, job.Kind, k.name)
	}
	switch p := any(&args).(type) {
	case *[]byte: // stored byte for byte, as Enqueue stores it
		*p = bytes.Clone(job.Payload)
		return args, nil
	case *json.RawMessage:
		*p = bytes.Clone(job.Payload)
		return args, nil
	}
	if err := json.Unmarshal(job.Payload, &args); err != nil {
		return args, fmt.Errorf("litequeue: decode job %d payload of kind %q as %v: %w", job.ID, job.Kind, reflect.TypeFor[T](), err)
	}
	return args, nil
}
