package dashboard_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/dashboard"
)

// TestSelected_DeleteConfirms: a delete of the selected jobs that the
// form does not confirm deletes nothing, on the file and on a server, and
// answers a page that names the jobs and asks, whose form carries them;
// the confirmed form deletes them. The other actions act at once.
func TestSelected_DeleteConfirms(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		f := newFlow(t, b)
		srv := f.server(t, dashboard.Options{AllowWrites: true})
		_, page := get(t, srv.URL+"/jobs?state=dead")
		token := csrf(t, page)
		dead, err := f.q.List(context.Background(), litequeue.Filter{State: litequeue.Dead})
		if err != nil || len(dead) != 2 {
			t.Fatalf("dead: %v, %v", dead, err)
		}
		ids := []string{itoa(dead[0].ID), itoa(dead[1].ID)}
		for _, confirmed := range []string{"", "no", "YES"} {
			form := url.Values{"csrf": {token}, "action": {"delete"}, "id": ids}
			if confirmed != "" {
				form.Set("confirmed", confirmed)
			}
			code, body := post(t, srv.URL+"/jobs/selected", form)
			if code != http.StatusOK {
				t.Fatalf("delete selected, confirmed=%q: %d\n%s", confirmed, code, body)
			}
			contains(t, "the question", body, "Delete 2 selected jobs ("+ids[0]+", "+ids[1]+") and their history for good? This cannot be undone.",
				`<input type="hidden" name="confirmed" value="yes">`, `<input type="hidden" name="action" value="delete">`,
				`<input type="hidden" name="id" value="`+ids[0]+`">`, `<input type="hidden" name="id" value="`+ids[1]+`">`,
				`<button id="confirm" class="danger">Delete 2 jobs</button>`)
			for _, j := range dead {
				if got := stateOf(t, f.q, j.ID); got != litequeue.Dead {
					t.Fatalf("confirmed=%q: job %d is %s after the unconfirmed delete, want dead", confirmed, j.ID, got)
				}
			}
		}
		code, body := post(t, srv.URL+"/jobs/selected", url.Values{"csrf": {token}, "action": {"delete"}, "confirmed": {"yes"}, "id": ids})
		if code != http.StatusOK || !strings.Contains(body, "Deleted: 2 of 2 selected jobs.") {
			t.Fatalf("the confirmed delete: %d\n%s", code, body)
		}
		for _, j := range dead {
			if _, err := f.q.Get(context.Background(), j.ID); !errors.Is(err, litequeue.ErrNotFound) {
				t.Errorf("job %d after the confirmed delete: %v, want ErrNotFound", j.ID, err)
			}
		}
	})
}
