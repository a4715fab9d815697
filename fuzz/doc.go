// Package fuzz holds litequeue's fuzz targets that need only its exported
// API, with their seed corpora under testdata/fuzz. It has no code of its
// own: run a target with
//
//	go test ./fuzz -run '^$' -fuzz '^FuzzPolicyDelay$' -fuzztime 60s
//
// Fuzz targets of unexported code live beside it in the root package, and
// so does FuzzOperations (model_test.go): it drives the model of the queue
// that the root's TestQueue_Operations checks with rapid, and shares that
// package's test helpers.
package fuzz
