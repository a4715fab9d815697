package main

import (
	"context"
	"fmt"

	"github.com/litequeue/litequeue"
)

// pause is "proc pause|resume DB queue|kind NAME": it pauses (how
// "pause") or resumes (how "resume") the queue or the kind (scope "queue"
// or "kind") name, and prints what it did.
func pause(ctx context.Context, q *litequeue.Queue, how, scope, name string) error {
	var act func(context.Context, string) error
	switch how + " " + scope {
	case "pause queue":
		act = q.PauseQueue
	case "pause kind":
		act = q.PauseKind
	case "resume queue":
		act = q.ResumeQueue
	case "resume kind":
		act = q.ResumeKind
	default:
		return fmt.Errorf("%s %s: want queue or kind", how, scope)
	}
	if err := act(ctx, name); err != nil {
		return err
	}
	fmt.Println(how, scope, name)
	return nil
}
