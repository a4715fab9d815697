package dashboard

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/prom"
)

// metricsHandler serves the queue's figures in Prometheus's text format,
// read at each scrape (see [prom.NewCollector]). A scrape that fails is
// logged and answered with a 500 that does not say why.
func metricsHandler(q *litequeue.Queue, log *slog.Logger) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(prom.NewCollector(q))
	gather := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		mfs, err := reg.Gather()
		if err != nil {
			log.Error("litequeue dashboard: metrics", "err", err)
			return nil, errors.New("internal error (the server's log has the details)")
		}
		return mfs, nil
	})
	return promhttp.HandlerFor(gather, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError})
}
