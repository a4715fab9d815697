// Package fuzz holds litequeue's fuzz targets that need only its exported
// API, with their seed corpora under testdata/fuzz. It has no code of its
// own: run a target with
//
//	go test ./fuzz -run '^$' -fuzz '^FuzzPolicyDelay$' -fuzztime 60s
//
// Fuzz targets of unexported code live beside it in the root package.
package fuzz
