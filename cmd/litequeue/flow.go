package main

import (
	"context"
	"fmt"
	"io"

	"github.com/litequeue/litequeue"
)

// The dependencies between jobs, as "show" and "flow" print them.

// nodeJSON is a job of a graph, or the other end of an edge, in --json
// output.
type nodeJSON struct {
	ID      int64           `json:"id"`
	Gone    bool            `json:"gone,omitempty"`
	Kind    string          `json:"kind,omitempty"`
	Queue   string          `json:"queue,omitempty"`
	State   litequeue.State `json:"state,omitempty"`
	Attempt int             `json:"attempt"`
}

// edgeJSON is a dependency in --json output: job waits for on.
type edgeJSON struct {
	Job   int64                    `json:"job"`
	On    int64                    `json:"on"`
	Rule  litequeue.DependencyRule `json:"rule"`
	State litequeue.EdgeState      `json:"state"`
}

// dependencyJSON is an edge of "show --json", and the job at its other end.
type dependencyJSON struct {
	Edge  edgeJSON `json:"edge"`
	Other nodeJSON `json:"other"`
}

// flowJSON is the output of "flow --json": the graph of job, its nodes in
// dependency order, each with its layer.
type flowJSON struct {
	Job   int64           `json:"job"`
	Nodes []layerNodeJSON `json:"nodes"`
	Edges []edgeJSON      `json:"edges"`
}

// layerNodeJSON is a node of "flow --json", with its layer: 0 for a job
// that depends on none of the graph's, else 1 more than the deepest of
// those it depends on.
type layerNodeJSON struct {
	nodeJSON
	Layer int `json:"layer"`
}

// toNodeJSON returns the JSON form of n.
func toNodeJSON(n litequeue.Node) nodeJSON {
	return nodeJSON{ID: n.ID, Gone: n.Gone, Kind: n.Kind, Queue: n.Queue, State: n.State, Attempt: n.Attempt}
}

// toDependenciesJSON returns the JSON form of deps, never null.
func toDependenciesJSON(deps []litequeue.Dependency) []dependencyJSON {
	out := make([]dependencyJSON, len(deps))
	for i, d := range deps {
		out[i] = dependencyJSON{Edge: edgeJSON(d.Edge), Other: toNodeJSON(d.Other)}
	}
	return out
}

// jobEdges reads the dependencies and the dependents of job id.
func jobEdges(ctx context.Context, q *litequeue.Queue, id int64) (deps, dependents []litequeue.Dependency, err error) {
	if deps, err = q.Dependencies(ctx, id); err != nil {
		return nil, nil, err
	}
	dependents, err = q.Dependents(ctx, id)
	return deps, dependents, err
}

// flow defines the flags of "flow" and returns the command.
func (c *cli) flow(fs *flagSet) runFunc {
	asJSON := fs.jsonFlag()
	return func(ctx context.Context, args []string) error {
		return c.readJob(args[0], func(q *litequeue.Queue, id int64) error {
			g, err := q.Graph(ctx, id)
			if err != nil {
				return err
			}
			if *asJSON {
				return writeJSON(c.stdout, toFlowJSON(id, g))
			}
			c.writeFlow(id, g)
			return nil
		})
	}
}

// toFlowJSON returns the JSON form of g, the graph of job id.
func toFlowJSON(id int64, g *litequeue.Graph) flowJSON {
	out := flowJSON{Job: id, Nodes: []layerNodeJSON{}, Edges: make([]edgeJSON, len(g.Edges))}
	for layer, nodes := range g.Layers() {
		for _, n := range nodes {
			out.Nodes = append(out.Nodes, layerNodeJSON{toNodeJSON(n), layer})
		}
	}
	for i, e := range g.Edges {
		out.Edges[i] = edgeJSON(e)
	}
	return out
}

// writeFlow writes g, the graph of job id: its jobs in dependency order,
// then its edges.
func (c *cli) writeFlow(id int64, g *litequeue.Graph) {
	fmt.Fprintf(c.stdout, "graph of job %d: %s, %s\n\n", id, plural(len(g.Nodes), "job"), plural(len(g.Edges), "edge"))
	tw := newTable(c.stdout)
	fmt.Fprintln(tw, "LAYER\tJOB\tKIND\tQUEUE\tSTATE\tTRIES")
	for layer, nodes := range g.Layers() {
		for _, n := range nodes {
			mark := ""
			if n.ID == id {
				mark = " *"
			}
			kind, queue, state := c.nodeCells(n)
			fmt.Fprintf(tw, "%d\t%d%s\t%s\t%s\t%s\t%d\n", layer, n.ID, mark, kind, queue, state, n.Attempt)
		}
	}
	tw.Flush()
	if len(g.Edges) == 0 {
		fmt.Fprintln(c.stdout, "\nno dependencies")
		return
	}
	fmt.Fprintln(c.stdout, "\nedges (JOB waits for ON):")
	tw = newTable(c.stdout)
	fmt.Fprintln(tw, "  JOB\tON\tRULE\tEDGE")
	for _, e := range g.Edges {
		fmt.Fprintf(tw, "  %d\t%d\t%s\t%s\n", e.Job, e.On, e.Rule, e.State)
	}
	tw.Flush()
}

// nodeCells returns the kind, queue and painted state of n for a table; a
// gone job shows "-", "-", "gone".
func (c *cli) nodeCells(n litequeue.Node) (kind, queue, state string) {
	if n.Gone {
		return "-", "-", "gone"
	}
	return n.Kind, n.Queue, c.paintCell(stateColor(n.State), string(n.State))
}

// showDependencies writes a job's dependencies and its dependents, if it
// has any, as tables: nothing for a job without edges.
func (c *cli) showDependencies(deps, dependents []litequeue.Dependency) {
	for _, s := range []struct {
		title string
		deps  []litequeue.Dependency
	}{{"dependencies (the jobs it waits for)", deps}, {"dependents (the jobs that wait for it)", dependents}} {
		if len(s.deps) > 0 {
			fmt.Fprintf(c.stdout, "\n%s:\n", s.title)
			c.dependencyTable(c.stdout, s.deps)
		}
	}
}

// dependencyTable writes deps, an edge and the job at its other end per
// row.
func (c *cli) dependencyTable(w io.Writer, deps []litequeue.Dependency) {
	tw := newTable(w)
	fmt.Fprintln(tw, "  JOB\tKIND\tQUEUE\tSTATE\tRULE\tEDGE")
	for _, d := range deps {
		kind, queue, state := c.nodeCells(d.Other)
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\n", d.Other.ID, kind, queue, state, d.Edge.Rule, d.Edge.State)
	}
	tw.Flush()
}
