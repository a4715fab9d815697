package postgres

import "github.com/litequeue/litequeue/internal/store"

// ClaimSQL is the claim's SELECT, for the tests of its plan.
const ClaimSQL = pgClaimSQL

// Dialect is the server's dialect.
var Dialect = &store.Dialect{}

// XactSQL names the transaction that runs and the server's start time;
// XactStatus tells whether the transaction it names committed.
const XactSQL = pgXactSQL

var XactStatus = xactStatus
