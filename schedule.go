package litequeue

import (
	"math"
	"time"
)

// ScheduleStep is one retry in a policy's worst-case schedule.
type ScheduleStep struct {
	Retry   int           // the retry's number, from 1: the run after attempt Retry failed
	MaxWait time.Duration // the longest wait before it: [Policy.MaxDelay](Retry)
	Total   time.Duration // the longest wait from the first failure to it: the sum of [ScheduleStep.MaxWait] so far
}

// Schedule returns the worst-case schedule of the policy's retries: one
// step for each of its [Policy.MaxTries] − 1 retries, at most
// [MaxTriesLimit] − 1 of them. It takes the policy as given, without
// filling zero fields, so call it on a complete policy such as
// [DefaultPolicy]() or one from [LoadConfig]. With the defaults the steps
// wait at most 2s, 4s, 8s, 16s, 32s, 1m4s and 2m8s: 4m14s in all.
func (p Policy) Schedule() []ScheduleStep {
	retries := min(p.MaxTries, MaxTriesLimit) - 1
	if retries <= 0 {
		return nil
	}
	steps := make([]ScheduleStep, retries)
	var total time.Duration
	for i := range steps {
		wait := p.MaxDelay(i + 1)
		total = min(total, math.MaxInt64-wait) + wait // saturates
		steps[i] = ScheduleStep{Retry: i + 1, MaxWait: wait, Total: total}
	}
	return steps
}
