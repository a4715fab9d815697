package litequeue_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/litequeue/litequeue"
)

// layerIDs is the IDs of layers, layer by layer.
func layerIDs(layers [][]litequeue.Node) [][]int64 {
	if layers == nil {
		return nil
	}
	ids := make([][]int64, len(layers))
	for i, l := range layers {
		for _, n := range l {
			ids[i] = append(ids[i], n.ID)
		}
	}
	return ids
}

func TestGraph_Layers(t *testing.T) {
	t.Parallel()
	nodes := func(ids ...int64) []litequeue.Node {
		var ns []litequeue.Node
		for _, id := range ids {
			ns = append(ns, litequeue.Node{ID: id})
		}
		return ns
	}
	edge := func(job, on int64) litequeue.Edge { return litequeue.Edge{Job: job, On: on} }
	for _, tc := range []struct {
		name string
		g    litequeue.Graph
		want [][]int64
	}{
		{"one job", litequeue.Graph{Nodes: nodes(7)}, [][]int64{{7}}},
		{"diamond", litequeue.Graph{Nodes: nodes(1, 2, 3, 4), Edges: []litequeue.Edge{edge(2, 1), edge(3, 1), edge(4, 2), edge(4, 3)}},
			[][]int64{{1}, {2, 3}, {4}}},
		// 5 depends on 1 directly and through 3: the longer chain places it.
		{"longest chain", litequeue.Graph{Nodes: nodes(1, 2, 3, 5), Edges: []litequeue.Edge{edge(3, 1), edge(5, 1), edge(5, 3)}},
			[][]int64{{1, 2}, {3}, {5}}},
		// Each layer is in ID order, whatever the order of the edges.
		{"ties by ID", litequeue.Graph{Nodes: nodes(1, 2, 3, 4, 6), Edges: []litequeue.Edge{edge(6, 4), edge(6, 2), edge(3, 1)}},
			[][]int64{{1, 2, 4}, {3, 6}}},
		{"empty", litequeue.Graph{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, layerIDs(tc.g.Layers())); diff != "" {
				t.Errorf("layers (-want +got):\n%s", diff)
			}
		})
	}
}
