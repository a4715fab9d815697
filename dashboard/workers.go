package dashboard

import (
	"context"
	"net/http"

	"github.com/litequeue/litequeue"
)

// The workers on the page: every Work loop at work on the database, of
// any process, as it last recorded itself, the silent ones marked.

// routeWorkers adds the workers' page to h's mux.
func (h *handler) routeWorkers() {
	h.mux.HandleFunc("GET /workers", h.workers)
}

// workers serves GET /workers.
func (h *handler) workers(w http.ResponseWriter, r *http.Request) {
	infos, err := h.q.Workers(r.Context())
	if err != nil {
		h.fail(w, err)
		return
	}
	h.render(w, http.StatusOK, "workers", map[string]any{
		"Title":       "Workers",
		"Refresh":     true,
		"Workers":     infos,
		"SilentAfter": litequeue.WorkerSilentAfter,
		"Heartbeat":   litequeue.WorkerHeartbeat,
	})
}

// workerCount is the overview's line on the workers: how many, and how
// many of them are silent.
type workerCount struct{ All, Silent int }

// workersData adds the overview's count of the workers to data.
func (h *handler) workersData(ctx context.Context, data map[string]any) error {
	infos, err := h.q.Workers(ctx)
	if err != nil {
		return err
	}
	n := workerCount{All: len(infos)}
	for _, w := range infos {
		if w.Silent {
			n.Silent++
		}
	}
	data["Workers"] = n
	return nil
}
