package litequeue

import (
	"context"
	"fmt"

	"github.com/litequeue/litequeue/internal/store"
)

// MaxCheckpoint is the largest checkpoint, in bytes, [Checkpoint]
// accepts: a checkpoint is written at once, in a commit of its own, and
// read back with every claim of its job, so it holds where to resume, not
// the work done.
const MaxCheckpoint = 64 << 10

// checkpointKind tells apart, in a sealed checkpoint's associated data, a
// checkpoint from the payload and the output of a job of the same queue
// and kind (see outputKind).
const checkpointKind = "\x00checkpoint"

// Checkpoint saves v as the checkpoint of the job whose handler was given
// ctx, durably before it returns: its own commit through the Queue's
// writer, fenced by the run's lease, replacing the checkpoint before it.
// v is JSON-encoded as payloads are ([]byte and [json.RawMessage] kept
// byte for byte), and sealed like the payload on a Queue with
// [Options.SealKeys].
//
// The job's next run, after a failure, a lease expiry (a process killed)
// or a replay, reads it back as [Job.Checkpoint] ([Job.DecodeCheckpoint]
// decodes it) and resumes from it; [Queue.ResetCheckpoint] deletes it,
// before a replay that should start over. It is kept once the job ends,
// and deleted with the job.
//
// Checkpoint returns an error wrapping [ErrLeaseLost], and saves nothing,
// once the run lost its lease (another worker rescued the job, the run
// timed out, or [Queue.CompleteTx] completed it); it returns an error,
// and changes nothing, when ctx is not a handler's, when v does not
// encode, or when the encoded value is over [MaxCheckpoint] bytes.
func Checkpoint(ctx context.Context, v any) error {
	r, err := runOf(ctx, "checkpoint")
	if err != nil {
		return err
	}
	stored, err := r.stored(v, savedValue{"checkpoint", checkpointKind, MaxCheckpoint, "MaxCheckpoint"})
	if err != nil {
		return fmt.Errorf("litequeue: checkpoint job %d: %w", r.claimed.ID, err)
	}
	var held bool
	err = r.st.write(ctx, func(tx store.Execer) (err error) {
		held, err = store.SetCheckpoint(ctx, tx, r.claimed, stored)
		return err
	})
	switch {
	case err != nil:
		return fmt.Errorf("litequeue: checkpoint job %d: %w", r.claimed.ID, err)
	case !held:
		return fmt.Errorf("litequeue: checkpoint job %d: %w", r.claimed.ID, ErrLeaseLost)
	}
	return nil
}

// DecodeCheckpoint unmarshals the job's JSON checkpoint
// ([Job.Checkpoint]) into v. A job with no checkpoint is an error.
func (j *Job) DecodeCheckpoint(v any) error {
	return decodeSaved(j.ID, "checkpoint", j.Checkpoint, v)
}

// openCheckpoints fills the Checkpoint of the jobs of the leases a claim
// just made from the checkpoints it read (by job ID), opened if sealed.
func (rn *runner) openCheckpoints(leases []*lease, byID map[int64][]byte) {
	for _, l := range leases {
		if cp, ok := byID[l.job.ID]; ok {
			l.job.Checkpoint = rn.seal.opened(l.job, checkpointKind, cp)
		}
	}
}
