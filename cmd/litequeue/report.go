package main

import (
	"fmt"
)

// report is what a write or a dry run did, said as it goes in lines of
// text, or with --json gathered into one JSON object, written at the end:
// the IDs of the jobs by what was done to them ("cancelled": [4, 7]), and
// counts and the like.
type report struct {
	c      *cli
	asJSON bool
	fields map[string]any
}

// report returns an empty report, in JSON if asJSON.
func (c *cli) report(asJSON bool) *report {
	return &report{c: c, asJSON: asJSON, fields: map[string]any{}}
}

// say writes a line of text, unless the report is in JSON.
func (r *report) say(format string, args ...any) {
	if !r.asJSON {
		fmt.Fprintf(r.c.stdout, format+"\n", args...)
	}
}

// ids makes sure the report lists the IDs of key, also when there are
// none: "cancelled": [].
func (r *report) ids(keys ...string) {
	for _, key := range keys {
		if _, ok := r.fields[key]; !ok {
			r.fields[key] = []int64{}
		}
	}
}

// addID adds a job's ID to the list of key.
func (r *report) addID(key string, id int64) {
	r.ids(key)
	r.fields[key] = append(r.fields[key].([]int64), id)
}

// set sets the fields of kv, names and values in turn.
func (r *report) set(kv ...any) {
	for i := 0; i+1 < len(kv); i += 2 {
		r.fields[kv[i].(string)] = kv[i+1]
	}
}

// end writes the JSON object of a report in JSON, also when err, the
// command's error, is not nil (what was done before a failure), and
// returns err.
func (r *report) end(err error) error {
	if !r.asJSON {
		return err
	}
	if werr := writeJSON(r.c.stdout, r.fields); err == nil {
		err = werr
	}
	return err
}
