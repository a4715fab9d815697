package prom_test

import (
	"context"
	"errors"
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

// Counters count the events of this process's Queue; Wrap chains them
// before the app's own OnEvent, which still sees every event.
func ExampleCounters_Wrap() {
	dir, _ := os.MkdirTemp("", "prom-example")
	defer os.RemoveAll(dir)
	counters := prom.NewCounters()
	opts := litequeue.Options{OnEvent: func(ev litequeue.Event) {
		if ev.Type == "job.dead" {
			fmt.Println("the app's OnEvent: job", ev.Job.ID, "is dead")
		}
	}}
	opts.OnEvent = counters.Wrap(opts.OnEvent)
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), opts)
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	q.Handle("email.send", func(ctx context.Context, job *litequeue.Job) error {
		if string(job.Payload) == `"nobody@invalid"` {
			return litequeue.Permanent(errors.New("no such domain"))
		}
		return nil
	})
	ctx := context.Background()
	for _, to := range []string{"ada@example.com", "bob@example.com", "nobody@invalid"} {
		if _, err := q.Enqueue(ctx, "email.send", to); err != nil {
			log.Fatal(err)
		}
	}
	if _, err := q.RunDue(ctx); err != nil {
		log.Fatal(err)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(prom.NewCollector(q), counters)
	printSeries(reg, "litequeue_jobs_")
	// Output:
	// the app's OnEvent: job 3 is dead
	// litequeue_jobs_completed_total{kind="email.send",queue="default"} 2
	// litequeue_jobs_dead_total{kind="email.send",queue="default"} 1
	// litequeue_jobs_enqueued_total{kind="email.send",queue="default"} 3
	// litequeue_jobs_started_total{kind="email.send",queue="default"} 3
}
