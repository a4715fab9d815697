package dashboard

import "github.com/litequeue/litequeue"

// output prepares the job's output for its page, nil for none: as its
// payload is shown, and hidden as "sealed" where its payload is (the
// Queue that seals a job's payload seals its output too).
func (h *handler) output(j *litequeue.Job) *payloadView {
	if j.Output == nil {
		return nil
	}
	if key, _ := j.Sealed(); key != "" && !h.opts.OpenSealed {
		return &payloadView{Text: "sealed", As: "sealed", Size: len(j.Output)}
	}
	v := showPayload(j.Output)
	return &v
}
