package prom_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/prom"
)

// printSeries serves reg's metrics as /metrics would, and prints the
// series whose names begin with one of prefixes.
func printSeries(reg *prometheus.Registry, prefixes ...string) {
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for line := range strings.Lines(rec.Body.String()) {
		for _, p := range prefixes {
			if strings.HasPrefix(line, p) {
				fmt.Print(line)
			}
		}
	}
}

// The Collector reads the file at each scrape: jobs by queue and state,
// what is paused, and more (see the package doc).
func ExampleNewCollector() {
	dir, _ := os.MkdirTemp("", "prom-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	ctx := context.Background()
	for range 3 {
		if _, err := q.Enqueue(ctx, "email.send", nil, litequeue.OnQueue("mail")); err != nil {
			log.Fatal(err)
		}
	}
	if err := q.PauseQueue(ctx, "mail"); err != nil {
		log.Fatal(err)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(prom.NewCollector(q))
	printSeries(reg, `litequeue_jobs{queue="mail",state="due"}`, "litequeue_queue_paused{")
	// Output:
	// litequeue_jobs{queue="mail",state="due"} 3
	// litequeue_queue_paused{queue="mail"} 1
}
