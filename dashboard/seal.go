package dashboard

import "github.com/litequeue/litequeue"

// payload prepares the job's payload for its page: a payload sealed at
// rest shows as "sealed (key k2)" unless the Queue opened it and
// Options.OpenSealed says to show it.
func (h *handler) payload(j *litequeue.Job) payloadView {
	key, opened := j.Sealed()
	if key == "" {
		return showPayload(j.Payload)
	}
	if !opened || !h.opts.OpenSealed {
		return payloadView{Text: "sealed (key " + key + ")", As: "sealed", Size: len(j.Payload)}
	}
	v := showPayload(j.Payload)
	v.As += ", sealed at rest with key " + key
	return v
}
