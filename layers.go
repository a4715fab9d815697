package litequeue

import (
	"cmp"
	"slices"
)

// Layers returns the graph's nodes in dependency order, in layers: the
// first holds the jobs that depend on none of the graph's, and a job is
// in the layer of the longest chain of dependencies that leads to it, so
// it comes after every job it depends on. Each layer is in ID order.
// A graph of one job is one layer of one node.
func (g *Graph) Layers() [][]Node {
	if len(g.Nodes) == 0 {
		return nil
	}
	layer := make(map[int64]int, len(g.Nodes))
	open := make(map[int64]int, len(g.Nodes)) // dependencies not yet placed
	dependents := make(map[int64][]int64, len(g.Nodes))
	for _, e := range g.Edges {
		open[e.Job]++
		dependents[e.On] = append(dependents[e.On], e.Job)
	}
	var ready []int64
	for _, n := range g.Nodes {
		if open[n.ID] == 0 {
			ready = append(ready, n.ID)
		}
	}
	depth := 0
	for len(ready) > 0 {
		id := ready[0]
		ready = ready[1:]
		for _, d := range dependents[id] {
			layer[d] = max(layer[d], layer[id]+1)
			depth = max(depth, layer[d])
			if open[d]--; open[d] == 0 {
				ready = append(ready, d)
			}
		}
	}
	layers := make([][]Node, depth+1)
	for _, n := range g.Nodes {
		if open[n.ID] > 0 { // on a cycle, which a graph never has: last
			layer[n.ID] = depth
		}
		layers[layer[n.ID]] = append(layers[layer[n.ID]], n)
	}
	for _, l := range layers {
		slices.SortFunc(l, func(a, b Node) int { return cmp.Compare(a.ID, b.ID) })
	}
	return layers
}
