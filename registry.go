package litequeue

import (
	"maps"
	"slices"
	"sync"
)

// A registry holds the handlers of a Queue by kind. Handle only adds
// kinds. It is safe for concurrent use.
type registry struct {
	mu         sync.RWMutex
	handlers   map[string]*handler
	middleware []func(Handler) Handler // of Use; only appended to
}

func newRegistry() *registry { return &registry{handlers: make(map[string]*handler)} }

// add registers h for kind, and reports false, adding nothing, if kind
// has a handler already.
func (r *registry) add(kind string, h *handler) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.handlers[kind]; dup {
		return false
	}
	r.handlers[kind] = h
	return true
}

// use adds middleware that wraps every kind's handler.
func (r *registry) use(mw ...func(Handler) Handler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.middleware = append(r.middleware, mw...)
}

// get returns the handler of kind, or nil.
func (r *registry) get(kind string) *handler {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.handlers[kind]
}

// count returns how many kinds have a handler. Handle only adds kinds,
// so a Work loop that saw the same number saw the same kinds.
func (r *registry) count() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.handlers)
}

// kinds returns the kinds with a handler, sorted.
func (r *registry) kinds() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.handlers))
}
