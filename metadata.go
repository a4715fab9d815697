package litequeue

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"maps"
	"unicode/utf8"
)

// The bounds of a job's metadata, checked by every [Queue.Enqueue] call: at
// most [MetadataKeysLimit] keys, and at most [MetadataSizeLimit] bytes in
// its keys and values together. They leave room for a W3C traceparent (55
// bytes) and a tracestate (at most 512) beside a few keys of the app's own.
const (
	MetadataKeysLimit = 32
	MetadataSizeLimit = 4096 // bytes, the lengths of every key and value summed
)

// Metadata sets the key of the job's metadata to value: a small map of
// strings carried from the enqueue to every run of the job ([Job.Metadata])
// and kept with it in the file, for what travels beside the payload rather
// than in it (a trace context, a request ID, the user who asked). Given
// again for one key, the last value wins. [Queue.Enqueue] refuses an empty
// key, a key or value that is not valid UTF-8, more than
// [MetadataKeysLimit] keys and more than [MetadataSizeLimit] bytes.
func Metadata(key, value string) EnqueueOption {
	return func(c *enqueueConfig) {
		if c.metadata == nil {
			c.metadata = make(metadataColumn)
		}
		c.metadata[key] = value
	}
}

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

// metadataColumn is the stored form of a job's metadata: a JSON object in
// litequeue_jobs.metadata, NULL for none.
type metadataColumn map[string]string

// Value implements driver.Valuer: NULL for no metadata, else the JSON
// object (its keys sorted).
func (m metadataColumn) Value() (driver.Value, error) {
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(map[string]string(m))
	return string(b), err
}

// Scan implements sql.Scanner. A column that is not a JSON object of
// strings (written by the app through DB(), say) fails the read that
// scans it, with the error.
func (m *metadataColumn) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case nil:
		*m = nil
		return nil
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("metadata column holds %T, want a JSON object as TEXT", src)
	}
	var decoded map[string]string
	if err := json.Unmarshal(b, &decoded); err != nil {
		return fmt.Errorf("decode metadata column: %w", err)
	}
	if len(decoded) == 0 {
		decoded = nil
	}
	*m = decoded
	return nil
}

// clone returns a map of its own for each job of a batch, nil for none.
func (m metadataColumn) clone() map[string]string {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}
