package store

// Commit runs the ops in one batch, as the writer's leader does, and is
// for the tests of the writer, which need a batch of their choice.
func (w *Writer[N]) Commit(ops []*Op[N]) {
	for _, op := range ops {
		op.done = make(chan bool, 1)
	}
	w.commit(ops)
}

// Err is the result of op after Commit.
func (op *Op[N]) Err() error { return op.err }

// The statements that the tests of SQLite's plans check.
const (
	SetRowSQL     = setRowSQL
	SetHeldRowSQL = setHeldRowSQL
	TallyDeadSQL  = tallyDeadSQL
)

// FailedSinceSQL is the breaker's count of failures, for its plan's test.
const FailedSinceSQL = failedSinceSQL

// Query is the SELECT that ListJobs (ordered) or CountJobs runs for f,
// with its arguments.
func (f JobFilter) Query(columns string, ordered bool) (string, []any) {
	return f.query(columns, ordered)
}

// The reads of the kept counts, whose plans the tests check.
const (
	KeptPendingSQL  = keptPendingSQL
	KeptDueKindsSQL = keptDueKindsSQL
	KeptByStateSQL  = keptByStateSQL
)
