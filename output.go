package litequeue

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/litequeue/litequeue/internal/store"
)

// outputKind tells apart, in a sealed output's associated data, an
// output from the payload of a job of the same queue and kind: a kind
// name never holds a control character (see checkName).
const outputKind = "\x00output"

// RecordOutput records v as the output of the run whose handler was
// given ctx: JSON-encoded as payloads are ([]byte and [json.RawMessage]
// kept byte for byte, not validated), and sealed like the payload on a
// Queue with [Options.SealKeys]. Called again, it replaces the value.
//
// The output is kept in memory and stored in the transaction that
// completes the run, fenced by the run's lease as the completion is: a
// holder that lost its lease stores neither. A run whose job
// [Queue.CompleteTx] completed stores it when the handler returns. A run
// that does not complete (it fails, snoozes, is cancelled, times out or
// is released) stores no output, and leaves the one an earlier
// completion stored. [Queue.Get] reads it as [Job.Output]; it is deleted
// with its job.
//
// RecordOutput returns an error, and changes nothing, when ctx is not a
// handler's, when v does not encode, or when the encoded value is over
// [Options.MaxOutput] bytes (checked before sealing). It is safe to call
// from the handler's goroutines.
func RecordOutput(ctx context.Context, v any) error {
	r, err := runOf(ctx, "record output")
	if err != nil {
		return err
	}
	stored, err := r.stored(v, savedValue{"output", outputKind, r.maxOutput, "Options.MaxOutput"})
	if err != nil {
		return fmt.Errorf("litequeue: record output of job %d: %w", r.claimed.ID, err)
	}
	r.mu.Lock()
	r.output = stored
	r.mu.Unlock()
	return nil
}

// A savedValue is what a handler saves of its run, an output or a
// checkpoint: its name, the suffix of its sealing's kind (outputKind,
// checkpointKind), and its bound, with the bound's name.
type savedValue struct {
	name, suffix string
	limit        int
	limitName    string
}

// stored returns v as the run stores it as the value sv: JSON-encoded as
// a payload is, within its bound (before sealing), and sealed like the
// payload. A nil []byte is an empty value, not none.
func (r *runValue) stored(v any, sv savedValue) ([]byte, error) {
	data, err := encodePayload(v)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	if len(data) > sv.limit {
		return nil, fmt.Errorf("%s of %d bytes is over the limit of %d bytes (%s)", sv.name, len(data), sv.limit, sv.limitName)
	}
	if data == nil {
		data = []byte{}
	}
	return r.seal.seal(r.claimed.Queue, r.claimed.Kind+sv.suffix, [][]byte{data})[0], nil
}

// recorded returns the output recorded in the run, as stored; nil: none.
func (r *runValue) recorded() []byte {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.output
}

// DecodeOutput unmarshals the job's JSON output ([Job.Output]) into v. A
// job with no output is an error.
func (j *Job) DecodeOutput(v any) error {
	return decodeSaved(j.ID, "output", j.Output, v)
}

// decodeSaved unmarshals data, the JSON value what of job id, into v; nil
// data is an error.
func decodeSaved(id int64, what string, data []byte, v any) error {
	if data == nil {
		return fmt.Errorf("decode job %d %s: the job has no %s", id, what, what)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode job %d %s: %w", id, what, err)
	}
	return nil
}

// opened returns the value stored, a job's output or checkpoint (told
// apart by suffix, outputKind or checkpointKind), opened if it is sealed
// and opens; else as stored, as a payload that does not open is. It is
// never nil.
func (s *sealer) opened(j *Job, suffix string, stored []byte) []byte {
	if plain, _, err := s.open(j.Queue, j.Kind+suffix, stored); err == nil {
		stored = plain
	}
	if stored == nil {
		return []byte{} // open returns nil for an empty value
	}
	return stored
}

// readSaved reads on st what j's handlers saved, its output and its
// checkpoint, into j, opened by s (see Queue.Get).
func readSaved(ctx context.Context, st *storage, s *sealer, j *Job) error {
	if !st.info.Composed {
		return nil // a file read-only, that no binary with them wrote
	}
	for _, v := range []struct {
		read   func(context.Context, store.Execer, int64) ([]byte, error)
		suffix string
		into   *[]byte
	}{{store.JobOutput, outputKind, &j.Output}, {store.JobCheckpoint, checkpointKind, &j.Checkpoint}} {
		stored, err := v.read(ctx, st.reads, j.ID)
		if err != nil {
			return fmt.Errorf("read %s: %w", v.suffix[1:], err)
		}
		if stored != nil {
			*v.into = s.opened(j, v.suffix, stored)
		}
	}
	return nil
}
