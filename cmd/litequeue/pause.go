package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/litequeue/litequeue"
)

// pauseTarget are the flags of "pause" and "resume": the queue or the
// kind, exactly one of them.
type pauseTarget struct {
	queue, kind *string
	asJSON      *bool
}

// pauseFlags defines --queue and --kind of "pause" or "resume" (how).
func (fs *flagSet) pauseFlags(how string) pauseTarget {
	return pauseTarget{
		queue:  fs.String("queue", "", how+" this `queue`: none of its jobs is claimed while paused"),
		kind:   fs.String("kind", "", how+" this `kind`, in every queue"),
		asJSON: fs.Bool("json", false, "write what was done as JSON"),
	}
}

// pauseCmd defines the flags of "pause" and returns the command: no
// process claims jobs of the queue or kind until "resume".
func (c *cli) pauseCmd(fs *flagSet) runFunc {
	t := fs.pauseFlags("pause")
	return func(ctx context.Context, _ []string) error {
		return c.setPaused(ctx, fs, t, true)
	}
}

// resumeCmd defines the flags of "resume" and returns the command.
func (c *cli) resumeCmd(fs *flagSet) runFunc {
	t := fs.pauseFlags("resume")
	return func(ctx context.Context, _ []string) error {
		return c.setPaused(ctx, fs, t, false)
	}
}

// setPaused pauses or resumes the queue or kind of t, through the
// library's write path, and says what it did: a resume of what was not
// paused changes nothing, and says so.
func (c *cli) setPaused(ctx context.Context, fs *flagSet, t pauseTarget, pause bool) error {
	queue, kind := fs.isSet("queue"), fs.isSet("kind")
	if queue == kind {
		return fs.usageError(fmt.Errorf("name the queue (--queue) or the kind (--kind), one of them"))
	}
	scope, name, verb := "queue", *t.queue, "resume"
	if kind {
		scope, name = "kind", *t.kind
	}
	if pause {
		verb = "pause"
	}
	if name == "" {
		return fs.usageError(fmt.Errorf("--%s is empty: name the %[1]s to %s", scope, verb))
	}
	q, err := c.openWrite()
	if err != nil {
		return err
	}
	defer q.Close()
	var act func(context.Context, string) error
	switch {
	case queue && pause:
		act = q.PauseQueue
	case queue:
		act = q.ResumeQueue
	case pause:
		act = q.PauseKind
	default:
		act = q.ResumeKind
	}
	ps, err := q.Paused(ctx)
	if err != nil {
		return err
	}
	was := slices.ContainsFunc(ps, func(p litequeue.Pause) bool { return p.Queue == *t.queue && p.Kind == *t.kind })
	if err := act(ctx, name); err != nil {
		return err
	}
	rep := c.report(*t.asJSON)
	rep.set(scope, name, "paused", pause, "was_paused", was)
	switch {
	case pause:
		rep.say("paused %s %s: no worker claims its jobs until 'litequeue resume --%s %s'", scope, name, scope, name)
	case was:
		rep.say("resumed %s %s", scope, name)
	default:
		rep.say("%s %s was not paused", scope, name)
	}
	return rep.end(nil)
}

// writePaused writes a line of what is paused, if anything is.
func writePaused(w io.Writer, ps []litequeue.Pause) {
	if len(ps) == 0 {
		return
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		what := "queue " + p.Queue
		if p.Kind != "" {
			what = "kind " + p.Kind
		}
		parts[i] = fmt.Sprintf("%s (since %s)", what, fmtTimeMS(p.Since))
	}
	fmt.Fprintf(w, "\npaused: %s\n", strings.Join(parts, ", "))
}

// pauseJSON is a paused queue or kind in "stats --json".
type pauseJSON struct {
	Queue   string `json:"queue,omitempty"`
	Kind    string `json:"kind,omitempty"`
	SinceMS int64  `json:"since_ms"` // Unix milliseconds
}

// pausesJSON is the JSON form of ps; nil if nothing is paused.
func pausesJSON(ps []litequeue.Pause) []pauseJSON {
	var out []pauseJSON
	for _, p := range ps {
		out = append(out, pauseJSON{p.Queue, p.Kind, p.Since.UnixMilli()})
	}
	return out
}
