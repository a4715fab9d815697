package litequeue

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/litequeue/litequeue/internal/store"
)

// The reads of dependencies: a job's edges either way, the graph it is
// part of, and its dependencies' outputs.

// Dependencies returns the edges of the job with the given ID to the jobs
// it depends on, each with the job at its other end, in the order of
// their IDs; none for a job without dependencies, or with no such ID.
func (q *Queue) Dependencies(ctx context.Context, id int64) ([]Dependency, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	return readDependencies(ctx, q.st, "dependencies", id, store.EdgesOf, func(e store.EdgeRow) int64 { return e.On })
}

// Dependents returns the edges into the job with the given ID from the
// jobs that depend on it, each with the job at its other end, in the
// order of their IDs.
func (q *Queue) Dependents(ctx context.Context, id int64) ([]Dependency, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	return readDependencies(ctx, q.st, "dependents", id, store.EdgesInto, func(e store.EdgeRow) int64 { return e.Job })
}

// edgeRead reads the edges of the jobs ids in one direction.
type edgeRead func(ctx context.Context, db store.Execer, ids []int64) ([]store.EdgeRow, error)

// readDependencies reads on st, in one snapshot, the edges of job id
// that read finds, and the job at the other end of each, which other
// names; what names them in an error.
func readDependencies(ctx context.Context, st *storage, what string, id int64, read edgeRead, other func(store.EdgeRow) int64) ([]Dependency, error) {
	deps := []Dependency{}
	if !st.info.Dependencies {
		return deps, nil
	}
	err := st.reads.Snapshot(ctx, func(tx store.Execer) error {
		edges, err := read(ctx, tx, []int64{id})
		if err != nil {
			return err
		}
		ids := make([]int64, len(edges))
		for i, e := range edges {
			ids[i] = other(e)
		}
		nodes, err := readNodes(ctx, tx, ids)
		if err != nil {
			return err
		}
		for _, e := range edges {
			deps = append(deps, Dependency{Edge: edgeOf(e), Other: nodes[other(e)]})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("litequeue: %s of job %d: %w", what, id, err)
	}
	return deps, nil
}

// edgeOf is the stored edge e as shown.
func edgeOf(e store.EdgeRow) Edge {
	return Edge{Job: e.Job, On: e.On, Rule: DependencyRule(e.Rule), State: EdgeState(e.State)}
}

// readNodes reads the nodes of the jobs ids, by ID: a Gone node for an
// ID that no job has.
func readNodes(ctx context.Context, tx store.Execer, ids []int64) (map[int64]Node, error) {
	rows, err := store.Nodes(ctx, tx, ids)
	if err != nil {
		return nil, err
	}
	nodes := make(map[int64]Node, len(ids))
	for _, id := range ids {
		nodes[id] = Node{ID: id, Gone: true}
	}
	for _, r := range rows {
		nodes[r.ID] = Node{ID: r.ID, Kind: r.Kind, Queue: r.Queue, State: State(r.State), Attempt: r.Attempt}
	}
	return nodes, nil
}

// Graph returns the jobs connected to the job with the given ID through
// dependencies, in either direction, itself among them, and the edges
// between them, read in one snapshot: a pipeline, a fan-out and its
// fan-in, a batch and its callback. A job without dependencies or
// dependents is a graph of one node; an ID that names no job and no edge
// is [ErrNotFound]. A graph of more than [MaxGraph] jobs is refused.
func (q *Queue) Graph(ctx context.Context, id int64) (*Graph, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	var g *Graph
	err = q.st.reads.Snapshot(ctx, func(tx store.Execer) (err error) {
		g, err = readGraph(ctx, tx, id, q.st.info.Dependencies)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("litequeue: graph of job %d: %w", id, err)
	}
	return g, nil
}

// readGraph reads the graph of job id in tx (one node, if the database
// has no dependencies).
func readGraph(ctx context.Context, tx store.Execer, id int64, deps bool) (*Graph, error) {
	ids, edges := []int64{id}, map[[2]int64]store.EdgeRow{}
	if deps {
		var err error
		if ids, edges, err = walkGraph(ctx, tx, id); err != nil {
			return nil, err
		}
	}
	nodes, err := readNodes(ctx, tx, ids)
	if err != nil {
		return nil, err
	}
	if len(edges) == 0 && nodes[id].Gone {
		return nil, ErrNotFound
	}
	g := &Graph{Nodes: make([]Node, len(ids)), Edges: make([]Edge, 0, len(edges))}
	for i, n := range ids {
		g.Nodes[i] = nodes[n]
	}
	for _, e := range edges {
		g.Edges = append(g.Edges, edgeOf(e))
	}
	slices.SortFunc(g.Edges, func(a, b Edge) int { return cmp.Or(cmp.Compare(a.Job, b.Job), cmp.Compare(a.On, b.On)) })
	return g, nil
}

// walkGraph walks the edges of job id both ways in tx, breadth first,
// and returns the IDs of the jobs it reached, id among them, sorted, and
// the edges, by their two ends. It stops at MaxGraph jobs.
func walkGraph(ctx context.Context, tx store.Execer, id int64) ([]int64, map[[2]int64]store.EdgeRow, error) {
	seen := map[int64]bool{id: true}
	ids, edges := []int64{id}, map[[2]int64]store.EdgeRow{}
	for frontier := ids; len(frontier) > 0; {
		var next []int64
		for _, read := range []edgeRead{store.EdgesOf, store.EdgesInto} {
			found, err := read(ctx, tx, frontier)
			if err != nil {
				return nil, nil, err
			}
			for _, e := range found {
				edges[[2]int64{e.Job, e.On}] = e
				for _, n := range []int64{e.Job, e.On} {
					if !seen[n] {
						seen[n], next = true, append(next, n)
					}
				}
			}
		}
		if len(seen) > MaxGraph {
			return nil, nil, fmt.Errorf("more than %d jobs (MaxGraph)", MaxGraph)
		}
		ids, frontier = append(ids, next...), next
	}
	slices.Sort(ids)
	return ids, edges, nil
}

// DependencyOutputs returns the outputs ([RecordOutput]) of the jobs that
// the job with the given ID depends on, by their IDs, opened where sealed: those that completed
// with an output (or, under [RunIfFailed], that recorded one in an
// earlier completion before a replay). A handler reads its inputs so;
// [DecodeDependencyOutput] decodes one.
func (q *Queue) DependencyOutputs(ctx context.Context, id int64) (map[int64][]byte, error) {
	leave, err := q.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	outputs := map[int64][]byte{}
	if !q.st.info.Dependencies {
		return outputs, nil
	}
	values, err := store.DependencyOutputs(ctx, q.st.reads, id)
	if err != nil {
		return nil, fmt.Errorf("litequeue: dependency outputs of job %d: %w", id, err)
	}
	for _, v := range values {
		outputs[v.ID] = q.seal.opened(&Job{Queue: v.Queue, Kind: v.Kind}, outputKind, v.Value)
	}
	return outputs, nil
}

// DecodeDependencyOutput unmarshals the JSON output of the dependency
// with ID dep, from the outputs [Queue.DependencyOutputs] returned, into
// v; a dependency that has no output is an error.
func DecodeDependencyOutput(outputs map[int64][]byte, dep int64, v any) error {
	return decodeSaved(dep, "output", outputs[dep], v)
}
