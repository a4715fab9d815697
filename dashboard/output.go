package dashboard

import "github.com/litequeue/litequeue"

// saved prepares a value the job's handler saved, its output or its
// checkpoint, for its page, nil for none: as its payload is shown, and
// hidden as "sealed" where its payload is (the Queue that seals a job's
// payload seals them too).
func (h *handler) saved(j *litequeue.Job, value []byte) *payloadView {
	if value == nil {
		return nil
	}
	if key, _ := j.Sealed(); key != "" && !h.opts.OpenSealed {
		return &payloadView{Text: "sealed", As: "sealed", Size: len(value)}
	}
	v := showPayload(value)
	return &v
}
