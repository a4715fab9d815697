package litequeue

import (
	"fmt"
	"testing"
	"time"
)

// TestSettle_AddHistory: the engine's addHistory adds every row, in
// order, with its text as it was (invalid UTF-8 and NUL bytes included),
// for any number of rows: none, fewer than a chunk, whole chunks and a
// rest.
func TestSettle_AddHistory(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	q := openTemp(t, Options{})
	for _, n := range []int{0, 1, historyChunk - 1, historyChunk, 2*historyChunk + 3} {
		job, err := q.Enqueue(ctx, "k", nil)
		if err != nil {
			t.Fatal(err)
		}
		start := time.UnixMilli(1_700_000_000_000).UTC()
		var rows []*historyRow
		for i := range n {
			rows = append(rows, &historyRow{
				attemptRow: attemptRow{
					Attempt: i + 1, StartedAt: ms(start.Add(time.Duration(i) * time.Second)),
					FinishedAt: ms(start.Add(time.Duration(i)*time.Second + time.Millisecond)),
					Outcome:    OutcomeFailed, Error: fmt.Sprintf("run %d: \xff\x00 'quoted' \"too\"", i),
					ErrorClass: "*errors.errorString", Delay: int64(i), Worker: fmt.Sprintf("w%d", i),
				},
				jobID: job.ID, kind: "k", next: Pending,
			})
		}
		if err := q.write(ctx, func(tx execer) error { return q.eng.addHistory(ctx, tx, rows) }); err != nil {
			t.Fatalf("%d rows: %v", n, err)
		}
		got, err := q.History(ctx, job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("%d rows added: History has %d", n, len(got))
		}
		for i, a := range got {
			w := rows[i]
			if a.Attempt != w.Attempt || a.Error != w.Error || a.Worker != w.Worker || a.ErrorClass != w.ErrorClass ||
				ms(a.StartedAt) != w.StartedAt || ms(a.FinishedAt) != w.FinishedAt || a.Delay != time.Duration(w.Delay)*time.Millisecond ||
				a.Outcome != w.Outcome {
				t.Errorf("%d rows, row %d: got %+v, want %+v", n, i, a, w.attemptRow)
			}
		}
	}
}
