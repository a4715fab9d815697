package litequeue

import (
	"fmt"
	"maps"
	"unicode/utf8"

	"github.com/litequeue/litequeue/internal/store"
)

// The bounds of a job's metadata, checked by every [Queue.Enqueue] call: at
// most [MetadataKeysLimit] keys, and at most [MetadataSizeLimit] bytes in
// its keys and values together. They leave room for a W3C traceparent (55
// bytes) and a tracestate (at most 512) beside a few keys of the app's own.
const (
	MetadataKeysLimit = 32
	MetadataSizeLimit = 4096 // bytes, the lengths of every key and value summed
)

// MetadataMap sets every key of m in the job's metadata, as [Metadata]
// does for one: for metadata made elsewhere, such as a propagator's
// carrier (see the lqotel package). The map is copied.
func MetadataMap(m map[string]string) EnqueueOption {
	return func(c *enqueueConfig) {
		for k, v := range m {
			Metadata(k, v)(c)
		}
	}
}

// checkMetadata returns an error naming what of m is out of bounds.
func checkMetadata(m map[string]string) error {
	if len(m) > MetadataKeysLimit {
		return fmt.Errorf("metadata of %d keys is over the limit of %d keys", len(m), MetadataKeysLimit)
	}
	size := 0
	for k, v := range m {
		switch {
		case k == "":
			return fmt.Errorf("metadata with an empty key (value %q)", v)
		case !utf8.ValidString(k):
			return fmt.Errorf("metadata key %q is not valid UTF-8", k)
		case !utf8.ValidString(v):
			return fmt.Errorf("metadata %q: value %q is not valid UTF-8", k, v)
		}
		size += len(k) + len(v)
	}
	if size > MetadataSizeLimit {
		return fmt.Errorf("metadata of %d bytes is over the limit of %d bytes", size, MetadataSizeLimit)
	}
	return nil
}

// cloneMetadata returns a map of its own for each job of a batch, nil for
// none.
func cloneMetadata(m store.Metadata) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}
