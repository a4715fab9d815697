package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/litequeue/litequeue"
)

// The graph page: the jobs a job's dependencies connect it to, drawn as
// an SVG on the server, in layers from the jobs that depend on none of
// the graph's (left) to those that wait longest (right).

// maxDrawn bounds the jobs the graph page draws: a graph may hold up to
// litequeue.MaxGraph; the page draws the first in dependency order.
const maxDrawn = 500

// The layout of the drawing, in SVG units.
const (
	boxWidth, boxHeight = 180, 60
	gapX, gapY          = 70, 24
	margin              = 10
)

// graphBox is a job of the drawing: the node, where its box is, and
// whether it is the job the page is for.
type graphBox struct {
	litequeue.Node
	X, Y  int
	Focus bool
}

// Label is the box's first line: the job's ID and kind, the kind cut to
// what fits.
func (b graphBox) Label() string {
	kind := []rune(b.Kind)
	if len(kind) > 18 {
		kind = append(kind[:17], '…')
	}
	if b.Gone {
		return "#" + strconv.FormatInt(b.ID, 10)
	}
	return "#" + strconv.FormatInt(b.ID, 10) + " " + string(kind)
}

// graphArrow is an edge of the drawing, from the dependency's box to the
// dependent's.
type graphArrow struct {
	litequeue.Edge
	Path string // the SVG path's d
}

// graphDrawing is the SVG's content: its boxes, its arrows and its size,
// and how many of the graph's jobs it leaves out.
type graphDrawing struct {
	Boxes         []graphBox
	Arrows        []graphArrow
	Width, Height int
	Total, Left   int
}

// BoxWidth and BoxHeight are the size of every box, for the template.
func (graphDrawing) BoxWidth() int  { return boxWidth }
func (graphDrawing) BoxHeight() int { return boxHeight }

// drawGraph lays out g, the graph of job id: a column per layer, the
// boxes of a layer in ID order, at most maxDrawn boxes (the job's own
// and its neighbours' first: see drawn), with the arrows between the
// boxes it draws.
func drawGraph(g *litequeue.Graph, id int64) graphDrawing {
	d := graphDrawing{Total: len(g.Nodes)}
	layers := g.Layers()
	keep := drawn(g, layers, id)
	at := map[int64]graphBox{}
	for layer, nodes := range layers {
		i := 0
		for _, n := range nodes {
			if !keep[n.ID] {
				continue
			}
			b := graphBox{Node: n, X: margin + layer*(boxWidth+gapX), Y: margin + i*(boxHeight+gapY), Focus: n.ID == id}
			d.Boxes, at[n.ID], i = append(d.Boxes, b), b, i+1
			d.Width, d.Height = max(d.Width, b.X+boxWidth+margin), max(d.Height, b.Y+boxHeight+margin)
		}
	}
	d.Left = d.Total - len(d.Boxes)
	for _, e := range g.Edges {
		from, ok1 := at[e.On]
		to, ok2 := at[e.Job]
		if !ok1 || !ok2 {
			continue
		}
		x1, y1, x2, y2 := from.X+boxWidth, from.Y+boxHeight/2, to.X-6, to.Y+boxHeight/2
		d.Arrows = append(d.Arrows, graphArrow{Edge: e,
			Path: fmt.Sprintf("M%d %d C%d %d, %d %d, %d %d", x1, y1, x1+gapX/2, y1, x2-gapX/2, y2, x2, y2)})
	}
	return d
}

// drawn picks the jobs of g, whose layers are layers, that the drawing of
// job id's graph shows: all of them up to maxDrawn, else the job itself,
// then the jobs it depends on and those that depend on it, then the rest
// in dependency order, until maxDrawn: the callback of a batch of
// thousands stays on its page.
func drawn(g *litequeue.Graph, layers [][]litequeue.Node, id int64) map[int64]bool {
	keep := make(map[int64]bool, min(len(g.Nodes), maxDrawn))
	add := func(n int64) {
		if len(keep) < maxDrawn {
			keep[n] = true
		}
	}
	add(id)
	for _, e := range g.Edges {
		switch id {
		case e.Job:
			add(e.On)
		case e.On:
			add(e.Job)
		}
	}
	for _, layer := range layers {
		for _, n := range layer {
			add(n.ID)
		}
	}
	return keep
}

// graph serves GET /jobs/{id}/graph: the drawing of the job's graph,
// with a replay form on each dead job where writes are allowed.
func (h *handler) graph(w http.ResponseWriter, r *http.Request) {
	id, err := jobID(r)
	if err != nil {
		h.problem(w, err)
		return
	}
	g, err := h.q.Graph(r.Context(), id)
	if errors.Is(err, litequeue.ErrNotFound) {
		h.problem(w, notFound("no job %d (it may have been purged)", id))
		return
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	h.render(w, http.StatusOK, "graph", map[string]any{
		"Title":   "Graph of job " + strconv.FormatInt(id, 10),
		"ID":      id,
		"Drawing": drawGraph(g, id),
		"Edges":   len(g.Edges),
		"Writes":  h.opts.AllowWrites,
		"CSRF":    h.csrf,
	})
}

// edgeCounts is what the job page says of a job's dependencies: how
// many jobs it waits for, and how many wait for it.
type edgeCounts struct{ Dependencies, Dependents int }

// jobEdges counts the dependencies and the dependents of job id for its
// page; nil for a job with neither.
func (h *handler) jobEdges(ctx context.Context, id int64) (*edgeCounts, error) {
	deps, err := h.q.Dependencies(ctx, id)
	if err != nil {
		return nil, err
	}
	dependents, err := h.q.Dependents(ctx, id)
	if err != nil || len(deps)+len(dependents) == 0 {
		return nil, err
	}
	return &edgeCounts{len(deps), len(dependents)}, nil
}

// routeGraph adds the graph page to h's routes.
func (h *handler) routeGraph() {
	h.mux.HandleFunc("GET /jobs/{id}/graph", h.graph)
}
