package dashboard

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/litequeue/litequeue"
)

// The policies page: the retry policies that the app's workers recorded
// in the database (see [litequeue.Queue.RecordedPolicies]), each saying
// who recorded it and when, and the kinds they handle; then those of
// Options.Policies; and, where there is neither, the library's defaults,
// saying so.

// policyView is one policy on the policies page.
type policyView struct {
	Name     string
	Policy   litequeue.Policy
	Source   string // where the policy comes from, in a sentence
	Schedule []litequeue.ScheduleStep
	Chart    any
}

// kindView is a recorded kind on the policies page.
type kindView struct {
	litequeue.RecordedPolicy
	Source string // who recorded it, and when
}

// UsesPolicy names the policy of the kind: "default" or a named one.
func (k kindView) UsesPolicy() string { return cmp.Or(k.RecordedPolicy.UsesPolicy, "default") }

// The sentences that say where a policy shown comes from.
const (
	givenSource    = "Given to this dashboard (its Options.Policies; under litequeue serve, its --config), not read from the database."
	defaultsSource = "The library's defaults, not recorded by any app: no worker has recorded its policies in this database " +
		"(each Work and RunDue records them as it starts)."
)

// policies serves GET /policies: each policy's worst-case schedule and a
// simulation of jobs that fail together during an outage, and the kinds
// the app's workers recorded.
func (h *handler) policies(w http.ResponseWriter, r *http.Request) {
	sim, err := parseSim(r)
	if err != nil {
		h.problem(w, err)
		return
	}
	recorded, err := h.q.RecordedPolicies(r.Context())
	if err != nil {
		h.fail(w, err)
		return
	}
	now := h.opts.Clock.Now()
	view := func(name string, p litequeue.Policy, source string) policyView {
		return policyView{Name: name, Policy: p, Source: source, Schedule: p.Schedule(), Chart: sim.chart(p)}
	}
	var views []policyView
	var kinds []kindView
	for _, rp := range recorded {
		source := recordedBy(rp, now)
		switch rp.Scope {
		case "kind":
			kinds = append(kinds, kindView{rp, source})
		case "default":
			views = append(views, view("default", rp.Policy, source))
		default:
			views = append(views, view(rp.Name, rp.Policy, source))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(h.opts.Policies)) {
		views = append(views, view(name, h.opts.Policies[name], givenSource))
	}
	if len(views) == 0 {
		views = append(views, view("default", litequeue.DefaultPolicy(), defaultsSource))
	}
	h.render(w, http.StatusOK, "policies", map[string]any{"Title": "Retry policies", "Policies": views, "Kinds": kinds, "Sim": sim})
}

// recordedBy says who recorded rp and when, as the page shows it.
func recordedBy(rp litequeue.RecordedPolicy, now time.Time) string {
	return fmt.Sprintf("Recorded by %s pid %d at %s.", rp.Host, rp.PID, showWhen(rp.RecordedAt, now))
}

// Limits of the policies page's simulation.
const (
	maxSimJobs   = 100_000
	maxSimOutage = 30 * 24 * time.Hour
)

// parseSim reads ?jobs= and ?outage=; 1000 jobs and 30s without them.
func parseSim(r *http.Request) (simulation, error) {
	sim := simulation{Jobs: 1000, Outage: 30 * time.Second}
	v := r.URL.Query()
	if s := v.Get("jobs"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxSimJobs {
			return sim, badRequest("jobs=%q is outside 1…%d", s, maxSimJobs)
		}
		sim.Jobs = n
	}
	if s := v.Get("outage"); s != "" {
		d, err := litequeue.ParseDuration(s)
		if err != nil || d <= 0 || d > maxSimOutage {
			return sim, badRequest("outage=%q is not a duration over 0 and up to %s", s, litequeue.FormatDuration(maxSimOutage))
		}
		sim.Outage = d
	}
	return sim, nil
}
