package litequeue

import (
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// NameLimit is the longest name of a kind, a queue or a periodic
// schedule, in bytes. A name is 1…NameLimit bytes of valid UTF-8 without
// control characters (those of [unicode.IsControl]: U+0000–U+001F, U+007F
// and U+0080–U+009F), so that it can be shown anywhere: as a Prometheus
// label, on a terminal, in a web page. [Queue.Enqueue],
// [Queue.EnqueueMany], [Queue.EnqueueTx], [Queue.Periodic], [Queue.Work]
// (for [WorkerOptions.Queues]), [Queue.PauseQueue] and [Queue.PauseKind]
// refuse any other name with a *[FieldError] whose Limit is NameLimit;
// [Queue.Handle] panics on it; [Open] and [LoadConfig] refuse it as a kind
// of [Options.Kinds]. Names already in a file are read as they are: a
// [Filter], [Queue.ResumeQueue] and [Queue.ResumeKind] take any.
const NameLimit = 255

// checkName returns the *FieldError of field, "kind", "queue" or "name",
// if name is not a name.
func checkName(field, name string) *FieldError {
	if nameProblem(name) == "" {
		return nil
	}
	return &FieldError{Field: field, Value: name, Limit: NameLimit, kind: notAName}
}

// mustBeKind panics, naming call, if kind is not a name: a mistake in
// the program, found at set-up by Handle and NewKind.
func mustBeKind(call, kind string) {
	if kind == "" {
		panic("litequeue: " + call + " with an empty kind")
	}
	if err := checkName("kind", kind); err != nil {
		panic("litequeue: " + call + ": " + err.Error())
	}
}

// nameProblem says what keeps s from being a name, as in "is not valid
// UTF-8"; "" if nothing does.
func nameProblem(s string) string {
	switch {
	case s == "":
		return "is empty"
	case len(s) > NameLimit:
		return fmt.Sprintf("is %d bytes long", len(s))
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	}
	for i, r := range s {
		if unicode.IsControl(r) {
			return fmt.Sprintf("holds the control character %U at byte %d", r, i)
		}
	}
	return ""
}

// nameError is the Error of a FieldError of a name, as in `queue "mail\n"
// holds the control character U+000A at byte 4 (want …)`; a name over
// NameLimit is shown by its first 32 bytes.
func (e *FieldError) nameError() string {
	name, _ := e.Value.(string)
	shown := strconv.Quote(name)
	if len(name) > NameLimit {
		n := 32
		for n > 0 && !utf8.RuneStart(name[n]) {
			n--
		}
		shown = strconv.Quote(name[:n]) + "…"
	}
	return fmt.Sprintf("%s %s %s (want 1…%v bytes of UTF-8 without control characters)", e.Field, shown, nameProblem(name), e.Limit)
}
