package litequeuetest_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/litequeuetest"
)

type welcome struct {
	To   string `json:"to"`
	Lang string `json:"lang,omitempty"`
}

// mailQueue holds two jobs of kind "email" and one of kind "sms".
func mailQueue(t *testing.T) (*litequeue.Queue, []*litequeue.Job) {
	t.Helper()
	q, _ := openQueue(t, litequeue.Options{})
	return q, []*litequeue.Job{
		enqueue(t, q, "email", welcome{To: "ada@example.com"}, litequeue.OnQueue("mail"), litequeue.Priority(2), litequeue.UniqueKey("welcome:ada")),
		enqueue(t, q, "email", welcome{To: "bob@example.com", Lang: "fr"}, litequeue.Delay(time.Hour)),
		enqueue(t, q, "sms", "+15550100"),
	}
}

func TestRequireEnqueued_Finds(t *testing.T) {
	t.Parallel()
	q, jobs := mailQueue(t)
	for name, tc := range map[string]struct {
		matches []litequeuetest.Match
		want    int64
	}{
		"kind alone":  {nil, jobs[2].ID},
		"payload":     {[]litequeuetest.Match{litequeuetest.Payload(welcome{To: "bob@example.com", Lang: "fr"})}, jobs[1].ID},
		"payload map": {[]litequeuetest.Match{litequeuetest.Payload(map[string]string{"lang": "fr", "to": "bob@example.com"})}, jobs[1].ID},
		"raw payload": {[]litequeuetest.Match{litequeuetest.Payload(json.RawMessage(` { "to" : "ada@example.com" } `))}, jobs[0].ID},
		"queue":       {[]litequeuetest.Match{litequeuetest.InQueue("mail")}, jobs[0].ID},
		"priority":    {[]litequeuetest.Match{litequeuetest.Priority(0)}, jobs[1].ID},
		"unique key":  {[]litequeuetest.Match{litequeuetest.UniqueKey("welcome:ada")}, jobs[0].ID},
		"run at":      {[]litequeuetest.Match{litequeuetest.RunAt(epoch.Add(time.Hour))}, jobs[1].ID},
		"all": {[]litequeuetest.Match{
			litequeuetest.InQueue("mail"), litequeuetest.InState(litequeue.Pending), litequeuetest.Priority(2),
			litequeuetest.RunAt(epoch), litequeuetest.Payload(welcome{To: "ada@example.com"}),
			litequeuetest.Where("to ada", func(j *litequeue.Job) bool { return j.ID == jobs[0].ID }),
		}, jobs[0].ID},
	} {
		t.Run(name, func(t *testing.T) {
			kind := "email"
			if tc.matches == nil {
				kind = "sms"
			}
			r := record(t)
			got := litequeuetest.RequireEnqueued(r, q, kind, tc.matches...)
			r.passed(t)
			if got == nil || got.ID != tc.want {
				t.Fatalf("RequireEnqueued returned %+v, want job %d", got, tc.want)
			}
			if got.Kind != kind || got.State != litequeue.Pending {
				t.Errorf("returned job %d is %s %s, want a pending %s", got.ID, got.State, got.Kind, kind)
			}
		})
	}
}

func TestRequireEnqueued_Fails(t *testing.T) {
	t.Parallel()
	q, _ := mailQueue(t)
	empty, _ := openQueue(t, litequeue.Options{})
	for name, tc := range map[string]struct {
		q       *litequeue.Queue
		kind    string
		matches []litequeuetest.Match
		wants   []string
	}{
		"wrong payload": {q, "email", []litequeuetest.Match{litequeuetest.Payload(welcome{To: "bob@example.com"})}, []string{
			`litequeuetest: no job of kind "email" with payload {"to":"bob@example.com"}; the jobs of that kind:`,
			"\n\tjob 1 email: queue \"mail\", pending, attempt 0 of 8, priority 2, run at 2026-01-01T12:00:00Z, unique key \"welcome:ada\", payload {\"to\":\"ada@example.com\"}",
			"\n\tjob 2 email: queue \"default\", pending, attempt 0 of 8, priority 0, run at 2026-01-01T13:00:00Z, payload {\"to\":\"bob@example.com\",\"lang\":\"fr\"}",
		}},
		"wrong queue and state": {q, "email", []litequeuetest.Match{litequeuetest.InQueue("mail"), litequeuetest.InState(litequeue.Completed)}, []string{
			`no job of kind "email" with queue "mail" and state completed; the jobs of that kind:`, "job 1 email", "job 2 email",
		}},
		"two match": {q, "email", nil, []string{
			`litequeuetest: 2 jobs of kind "email", want one:`, "\n\tjob 1 email", "\n\tjob 2 email",
		}},
		"misspelt kind": {q, "emial", nil, []string{
			`litequeuetest: no job of kind "emial" was enqueued; the kinds there are: "email" (2), "sms" (1)`,
		}},
		"no jobs": {empty, "email", []litequeuetest.Match{litequeuetest.Priority(1)}, []string{
			`litequeuetest: no job of kind "email" was enqueued; the queue has no jobs`,
		}},
		"payload that does not encode": {q, "email", []litequeuetest.Match{litequeuetest.Payload(make(chan int))}, []string{
			"litequeuetest: payload (chan int)", "json: unsupported type: chan int",
		}},
		"custom condition": {q, "sms", []litequeuetest.Match{litequeuetest.Where("a trace ID", func(*litequeue.Job) bool { return false })}, []string{
			`no job of kind "sms" with a trace ID; the jobs of that kind:`, "\n\tjob 3 sms: ",
		}},
	} {
		t.Run(name, func(t *testing.T) {
			r := record(t)
			if got := litequeuetest.RequireEnqueued(r, tc.q, tc.kind, tc.matches...); got != nil {
				t.Errorf("RequireEnqueued returned job %d, want nil", got.ID)
			}
			r.failed(t, tc.wants...)
		})
	}
}

func TestRequireEnqueued_EmptyPayload(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	enqueue(t, q, "ping", []byte(nil))
	enqueue(t, q, "ping", nil) // stored as null

	r := record(t)
	if got := litequeuetest.RequireEnqueued(r, q, "ping", litequeuetest.Payload([]byte{})); got == nil || got.ID != 1 {
		t.Errorf("Payload([]byte{}) found %+v, want job 1", got)
	}
	if got := litequeuetest.RequireEnqueued(r, q, "ping", litequeuetest.Payload(nil)); got == nil || got.ID != 2 {
		t.Errorf("Payload(nil) found %+v, want job 2", got)
	}
	r.passed(t)

	litequeuetest.RequireEnqueued(r, q, "ping", litequeuetest.Payload(0))
	r.failed(t, "with payload 0;", "job 1 ping: queue \"default\", pending, attempt 0 of 8, priority 0, run at 2026-01-01T12:00:00Z, empty payload", "job 2 ping", "payload null")
}

func TestRequireEnqueued_BytesPayload(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	enqueue(t, q, "blob", []byte("\x00\x01raw"))
	enqueue(t, q, "blob", []byte(`{"a": 1}`))

	r := record(t)
	if got := litequeuetest.RequireEnqueued(r, q, "blob", litequeuetest.Payload([]byte("\x00\x01raw"))); got == nil || got.ID != 1 {
		t.Errorf("Payload of bytes that are not JSON found %+v, want job 1", got)
	}
	if got := litequeuetest.RequireEnqueued(r, q, "blob", litequeuetest.Payload(map[string]int{"a": 1})); got == nil || got.ID != 2 {
		t.Errorf("Payload of a map found %+v, want job 2", got)
	}
	r.passed(t)

	litequeuetest.RequireEnqueued(r, q, "blob", litequeuetest.Payload([]byte("\x00\x02raw")))
	r.failed(t, `with payload "\x00\x02raw";`, `job 1 blob: `, `payload "\x00\x01raw" (not JSON)`, `payload {"a": 1}`)
}

func TestRequireNotEnqueued(t *testing.T) {
	t.Parallel()
	q, _ := mailQueue(t)
	r := record(t)
	litequeuetest.RequireNotEnqueued(r, q, "push")
	litequeuetest.RequireNotEnqueued(r, q, "email", litequeuetest.Payload(welcome{To: "eve@example.com"}))
	litequeuetest.RequireNotEnqueued(r, q, "sms", litequeuetest.InState(litequeue.Dead))
	r.passed(t)

	r = record(t)
	litequeuetest.RequireNotEnqueued(r, q, "email", litequeuetest.InState(litequeue.Pending))
	r.failed(t, `litequeuetest: want no job of kind "email" with state pending, found 2:`, "\n\tjob 1 email", "\n\tjob 2 email")

	r = record(t)
	litequeuetest.RequireNotEnqueued(r, q, "sms")
	r.failed(t, `litequeuetest: want no job of kind "sms", found 1:`, "\n\tjob 3 sms: ", `payload "+15550100"`)
}

func TestEnqueued(t *testing.T) {
	t.Parallel()
	q, jobs := mailQueue(t)
	r := record(t)
	got := litequeuetest.Enqueued(r, q, "email", litequeuetest.InState(litequeue.Pending))
	if len(got) != 2 || got[0].ID != jobs[0].ID || got[1].ID != jobs[1].ID {
		t.Errorf("Enqueued = %v, want jobs %d and %d", got, jobs[0].ID, jobs[1].ID)
	}
	if got := litequeuetest.Enqueued(r, q, "push"); len(got) != 0 {
		t.Errorf("Enqueued(push) = %v, want none", got)
	}
	r.passed(t)
}

// emails is the typed kind of mailQueue's jobs of kind "email", which the
// string API enqueued.
var emails = litequeue.NewKind[welcome]("email")

func TestRequireEnqueuedKind(t *testing.T) {
	t.Parallel()
	q, jobs := mailQueue(t)
	r := record(t)
	if got := litequeuetest.RequireEnqueuedKind(r, q, emails, welcome{To: "bob@example.com", Lang: "fr"}); got == nil || got.ID != jobs[1].ID {
		t.Errorf("RequireEnqueuedKind found %+v, want job %d", got, jobs[1].ID)
	}
	if got := litequeuetest.RequireEnqueuedKind(r, q, emails, welcome{To: "ada@example.com"}, litequeuetest.InQueue("mail")); got == nil || got.ID != jobs[0].ID {
		t.Errorf("RequireEnqueuedKind with InQueue found %+v, want job %d", got, jobs[0].ID)
	}
	litequeuetest.RequireNotEnqueued(r, q, "email", litequeuetest.Args(emails, welcome{To: "bob@example.com"}))
	if got := litequeuetest.Enqueued(r, q, "sms", litequeuetest.Args(emails, welcome{To: "ada@example.com"})); len(got) != 0 {
		t.Errorf("Enqueued(sms, Args of kind email) = %v, want none: the jobs are of another kind", got)
	}
	r.passed(t)

	r = record(t)
	litequeuetest.RequireEnqueuedKind(r, q, emails, welcome{To: "bob@example.com"})
	r.failed(t, `litequeuetest: no job of kind "email" with args {"to":"bob@example.com"}; the jobs of that kind:`, "\n\tjob 1 email", "\n\tjob 2 email")

	r = record(t)
	litequeuetest.RequireEnqueuedKind(r, q, litequeue.NewKind[chan int]("email"), make(chan int))
	r.failed(t, `litequeuetest: args (chan int)`, `of kind "email": json: unsupported type: chan int`)
}

// reading is a payload whose time and unexported field the JSON does not
// carry as the program holds them.
type reading struct {
	At      time.Time
	Celsius float64
	cached  string
}

// TestRequireEnqueuedKind_ReadBack compares values as a job carries them:
// a time in another zone, with a monotonic reading, matches the time read
// back; an unexported field is not compared (and cmp does not panic on it).
func TestRequireEnqueuedKind_ReadBack(t *testing.T) {
	t.Parallel()
	q, _ := openQueue(t, litequeue.Options{})
	readings := litequeue.NewKind[reading]("sensor.reading")
	at := time.Now().In(time.FixedZone("CET", 3600))
	if _, err := readings.Enqueue(t.Context(), q, reading{At: at, Celsius: 21.5, cached: "x"}); err != nil {
		t.Fatal(err)
	}
	r := record(t)
	litequeuetest.RequireEnqueuedKind(r, q, readings, reading{At: at.UTC(), Celsius: 21.5})
	r.passed(t)

	r = record(t)
	litequeuetest.RequireEnqueuedKind(r, q, readings, reading{At: at, Celsius: 21.6})
	r.failed(t, `no job of kind "sensor.reading" with args {"At":`, `"Celsius":21.6}`)
}
