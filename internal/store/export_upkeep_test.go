package store

// The statements of retention, expiry, rescue and the due times whose
// plans the tests of SQLite's plans check.
const (
	DueExpirySQL    = dueExpirySQL
	AnyExpirySQL    = anyExpirySQL
	ClaimFirstSQL   = claimFirstSQL
	NextLeaseSQL    = nextLeaseSQL
	NextPendingSQL  = nextPendingSQL + nextPendingEnd
	PendingKindsSQL = pendingKindsSQL
	ExpiredSQL      = expiredSQL
	ExpiredKeysSQL  = expiredKeysSQL
)

// FinishedJobsQuery is the read of FinishedJobs for c, with its arguments.
func FinishedJobsQuery(c Class, states []string, cutoff int64, limit int) (string, []any) {
	return c.finishedJobs(states, cutoff, limit)
}

// The reads of the last hour's runs, without an index by finished_at.
var (
	RetriesSQL        = retriesSQL
	FailedKindsSQL    = failedKindsSQL
	DeathsSQL         = deathsSQL
	FailuresSQL       = failuresSQL
	CompletedSinceSQL = completedSinceSQL
	WindowMargin      = int64(windowMargin)
)
