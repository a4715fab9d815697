package litequeue

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// CompleteTx completes job — the [*Job] a handler was given — inside the
// caller's transaction, begun on [Queue.DB](), if and only if the handler
// still holds the job's lease; else it returns [ErrLeaseLost] and changes
// nothing, and the caller should roll back. The lease is lost when it
// expired and another worker rescued the job, when the run timed out, and
// when [Queue.Cancel] asked the job to stop. So a handler that writes to
// the same file can make its write, an idempotency key ([Queue.MarkTx]) and
// the job's completion one commit: exactly once for local effects.
//
// CompleteTx fires no event and adds no history row: when the handler
// returns, its worker records the run as completed and fires job.completed,
// whatever the handler returns after a committed CompleteTx. Once the
// commit is made the handler's context stays alive until the handler
// returns (the lease renewals stop, and the lease is not lost); only the
// handler's timeout or a shutdown's grace still cancels it. If the caller
// rolls back instead, the run ends as the handler's return value says.
// Calling it again under the same lease after a commit returns nil.
func (q *Queue) CompleteTx(ctx context.Context, tx *sqlx.Tx, job *Job) error {
	leave, err := q.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	etx := q.st.appTx(tx)
	row, done, err := holder(ctx, etx, job)
	switch {
	case err != nil:
		return fmt.Errorf("litequeue: complete job %d: %w", job.ID, err)
	case done:
		return nil
	case row.Cancel:
		return fmt.Errorf("litequeue: complete job %d: cancelled: %w", job.ID, ErrLeaseLost)
	}
	d := completeHeld(row, q.now())
	if err := storeDecision(ctx, etx, &d); err != nil {
		return fmt.Errorf("litequeue: complete job %d: %w", job.ID, err)
	}
	return nil
}
