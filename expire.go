package litequeue

// Expiry: a job enqueued with ExpireAfter(d), or of a kind handled
// WithExpiry(d), must start within d of the moment it is first due, its
// RunAt at enqueue; litequeue_jobs.expires_at holds that moment. A pending
// job whose expires_at has come is expired (see expire in decide.go): by
// the next claim of any Queue on the file or server, in the claim's own
// transaction before it claims, so that no claim ever starts it; and by
// the janitor's sweep, so that it does not wait for a worker of its kind.
// The rule holds for every start, not just the first: a retry or a snooze
// that would run at or after expires_at expires instead, and so does a
// Replay or a RunNow after it. NextDue does not report expiries: Work's
// janitor runs at least once a minute, and RunDue's after each call.
