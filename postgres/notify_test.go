package postgres_test

import (
	"context"
	"database/sql"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/jackc/pgx/v5"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/internal/pgtest"
)

// inSchema returns dsn, a postgres:// URL or a keyword/value DSN, with
// its connections' search_path set to schema, which it creates.
func inSchema(t *testing.T, admin *sql.DB, dsn, schema string) string {
	t.Helper()
	if _, err := admin.Exec(`CREATE SCHEMA ` + pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return dsn + " search_path=" + schema
	}
	v := u.Query()
	v.Set("search_path", schema)
	u.RawQuery = v.Encode()
	return u.String()
}

// listening waits until n sessions of the database listen, idle, and
// returns the channels they listen on, by pid.
func listening(t *testing.T, admin *sql.DB, n int) map[int]string {
	t.Helper()
	var channels map[int]string
	waitFor(t, "Work to listen", func() bool {
		channels = map[int]string{}
		rows, err := admin.Query(`SELECT pid, query FROM pg_stat_activity
			WHERE datname = current_database() AND query LIKE 'LISTEN %' AND state = 'idle'`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var pid int
			var q string
			if err := rows.Scan(&pid, &q); err != nil {
				t.Fatal(err)
			}
			ch := strings.TrimSuffix(strings.TrimPrefix(q, `LISTEN "`), `"`)
			channels[pid] = strings.ReplaceAll(ch, `""`, `"`)
		}
		return rows.Err() == nil && len(channels) == n
	})
	return channels
}

// notifications listens on channel on a connection of its own to dsn.
type notifications struct {
	conn    *pgx.Conn
	channel string
}

func listen(t *testing.T, dsn, channel string) *notifications {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	if _, err := conn.Exec(t.Context(), `LISTEN `+pgx.Identifier{channel}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	return &notifications{conn, channel}
}

// until returns how many notifications came before the one with payload
// fence, waiting up to 10 s of real time for each.
func (l *notifications) until(t *testing.T, fence string) int {
	t.Helper()
	for n := 0; ; n++ {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		got, err := l.conn.WaitForNotification(ctx)
		cancel()
		if err != nil {
			t.Fatalf("channel %s: after %d notifications: %v", l.channel, n, err)
		}
		if got.Payload == fence {
			return n
		}
	}
}

// TestNotify_ChannelPerSchema runs Work on two Queues in two schemas of
// one database, the second's tables upgraded from version 3 and its name
// 63 bytes long: each Work listens on a channel of its own, of at most 63
// bytes; a job enqueued in one schema notifies that schema's channel
// only, observed by listeners of the test's own on both channels (the
// server delivers notifications in the order their transactions
// committed, so a fence sent after both enqueues ends the count); and
// each Work, its clock standing still, starts the job of its own schema.
func TestNotify_ChannelPerSchema(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	long := strings.Repeat("schema_b_", 7)[:63]
	dsns := []string{inSchema(t, admin, dsn, "a"), inSchema(t, admin, dsn, long)}
	oldTables(t, dsns[1], 3, 0)

	clk := clock.NewMock()
	var queues []*litequeue.Queue
	var started []<-chan int64
	var channels []string // of each Work's listener
	seen := map[int]bool{}
	for i, dsn := range dsns {
		q := open(t, dsn, clk)
		queues, started = append(queues, q), append(started, startWork(t, q))
		for pid, ch := range listening(t, admin, i+1) {
			if !seen[pid] {
				seen[pid], channels = true, append(channels, ch)
			}
		}
	}
	if channels[0] == channels[1] {
		t.Fatalf("both schemas' Work listen on the channel %q", channels[0])
	}
	listeners := make([]*notifications, len(channels))
	for i, ch := range channels {
		if len(ch) > 63 {
			t.Errorf("channel %q: %d bytes, more than PostgreSQL's 63", ch, len(ch))
		}
		listeners[i] = listen(t, dsn, ch)
	}

	for i, q := range queues {
		j, err := q.Enqueue(t.Context(), "k", i)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case id := <-started[i]:
			if id != j.ID {
				t.Fatalf("schema %d: started job %d, want %d", i, id, j.ID)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("schema %d: the job enqueued did not start, the clock standing still", i)
		}
	}
	if _, err := admin.Exec(`SELECT pg_notify($1, 'fence'), pg_notify($2, 'fence')`, channels[0], channels[1]); err != nil {
		t.Fatal(err)
	}
	for i, l := range listeners {
		if n := l.until(t, "fence"); n != 1 {
			t.Errorf("schema %d's channel %s: %d notifications for its one job, want 1", i, l.channel, n)
		}
	}
}
