package dashboard_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/dashboard"
)

// An app mounts the dashboard in its own server, under a prefix and
// behind a token: a request without the token is refused; with it, the
// pages and the metrics answer.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "dashboard-example")
	defer os.RemoveAll(dir)
	q, err := litequeue.Open(filepath.Join(dir, "jobs.db"), litequeue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	for range 2 {
		if _, err := q.Enqueue(context.Background(), "email.send", nil, litequeue.OnQueue("mail")); err != nil {
			log.Fatal(err)
		}
	}

	mux := http.NewServeMux()
	mux.Handle("/queue/", dashboard.New(q, dashboard.Options{Prefix: "/queue", Token: "s3cret"}))
	get := func(path, token string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "https://app.example.com"+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}
	fmt.Println("/queue/ without the token:", get("/queue/", "").Code)
	fmt.Println("/queue/ with it:", get("/queue/", "s3cret").Code)
	for line := range strings.Lines(get("/queue/metrics", "s3cret").Body.String()) {
		if strings.HasPrefix(line, `litequeue_jobs{queue="mail",state="due"}`) {
			fmt.Print(line)
		}
	}
	// Output:
	// /queue/ without the token: 401
	// /queue/ with it: 200
	// litequeue_jobs{queue="mail",state="due"} 2
}
