package store

// The statements of retention, expiry, rescue and the due times whose
// plans the tests of SQLite's plans check.
const (
	DueExpirySQL   = dueExpirySQL
	AnyExpirySQL   = anyExpirySQL
	ClaimFirstSQL  = claimFirstSQL
	NextLeaseSQL   = nextLeaseSQL
	NextPendingSQL = nextPendingSQL
	ExpiredSQL     = expiredSQL
	ExpiredKeysSQL = expiredKeysSQL
)

// FinishedJobsQuery is the read of FinishedJobs for c, with its arguments.
func FinishedJobsQuery(c Class, states []string, cutoff int64, limit int) (string, []any) {
	return c.finishedJobs(states, cutoff, limit)
}
