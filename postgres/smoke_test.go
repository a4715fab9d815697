package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"testing"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/postgres"
)

func freshDSN(t *testing.T) string {
	base := os.Getenv("LITEQUEUE_TEST_POSTGRES")
	if base == "" {
		t.Skip("LITEQUEUE_TEST_POSTGRES is not set")
	}
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	name := fmt.Sprintf("lq_%d", rand.Int64())
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(base)
	u.Path = "/" + name
	return u.String()
}

func TestSmoke(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewMock()
	q, err := postgres.Open(ctx, freshDSN(t), litequeue.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	fails := 1
	q.Handle("k", func(ctx context.Context, j *litequeue.Job) error {
		if fails > 0 {
			fails--
			return errors.New("boom \x00 \xff")
		}
		return nil
	})
	j, err := q.Enqueue(ctx, "k", map[string]int{"a": 1}, litequeue.UniqueKey("u1"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := q.Enqueue(ctx, "k", map[string]int{"a": 1}, litequeue.UniqueKey("u1"))
	if err != nil || !d.Duplicate || d.ID != j.ID {
		t.Fatalf("dup: %+v %v", d, err)
	}
	jobs, err := q.EnqueueMany(ctx, "k", []any{1, 2, 3})
	if err != nil || len(jobs) != 3 {
		t.Fatal(jobs, err)
	}
	n, err := q.RunDue(ctx)
	t.Log("rundue", n, err)
	clk.Add(10 * 60e9)
	n, err = q.RunDue(ctx)
	t.Log("rundue", n, err)
	h, err := q.History(ctx, j.ID)
	t.Logf("%+v %v", h, err)
	s, err := q.Stats(ctx)
	t.Logf("%+v %v", s, err)
	g, err := q.Get(ctx, j.ID)
	t.Logf("%+v %v", g, err)
}
