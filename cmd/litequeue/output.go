package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/litequeue/litequeue"
)

// newTable returns a tabwriter for a table of columns separated by tabs.
// Call Flush when the table is written.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// writeJSON writes v to w as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// ANSI colours. Every code has the same length, so that a table column
// whose every cell is painted (see paintCell) still lines up in a
// tabwriter, which counts the codes as text.
const (
	red     = "\x1b[31m"
	green   = "\x1b[32m"
	yellow  = "\x1b[33m"
	blue    = "\x1b[34m"
	bold    = "\x1b[01m"
	noColor = "\x1b[39m"
	reset   = "\x1b[0m"
)

// colorOut reports whether stdout takes colour: a terminal that is not
// TERM=dumb, and no NO_COLOR in the environment.
func (c *cli) colorOut() bool {
	return c.stdoutTTY && c.getenv("TERM") != "dumb" && c.getenv("NO_COLOR") == ""
}

// paintCell returns s in the colour code, when stdout takes colour. Use it
// for every cell of a column, the header included, or for none.
func (c *cli) paintCell(code, s string) string {
	if !c.colorOut() {
		return s
	}
	return code + s + reset
}

// stateColor is the colour of a job state.
func stateColor(s litequeue.State) string {
	switch s {
	case litequeue.Dead:
		return red
	case litequeue.Completed:
		return green
	case litequeue.Running:
		return blue
	case litequeue.Cancelled, litequeue.Discarded, litequeue.Expired:
		return yellow
	}
	return noColor
}

// confirm asks question on the terminal and reports whether the answer is
// yes. Without a terminal it does not ask: it returns an error telling the
// user to pass --yes.
func (c *cli) confirm(question, refusal string) (bool, error) {
	if !c.stdinTTY || !c.stderrTTY {
		return false, usageErrorf("%s unasked: no terminal to ask on (add --yes)", refusal)
	}
	fmt.Fprintf(c.stderr, "%s [y/N] ", question)
	answer, err := bufio.NewReader(c.stdin).ReadString('\n')
	if err != nil && answer == "" {
		fmt.Fprintln(c.stderr)
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// agree asks question as confirm does, and says on stderr that nothing
// was done when the answer is no.
func (c *cli) agree(question, refusal, nothing string) (bool, error) {
	ok, err := c.confirm(question, refusal)
	if err == nil && !ok {
		fmt.Fprintln(c.stderr, nothing)
	}
	return ok && err == nil, err
}

// The time layouts of the output: stored times are whole milliseconds,
// shown in UTC so that the output reads the same anywhere.
const (
	timeLayout   = "2006-01-02T15:04:05Z"
	timeLayoutMS = "2006-01-02T15:04:05.000Z"
)

// fmtTime shows a stored time to the second, or "-" for none.
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(timeLayout)
}

// fmtTimeMS shows a stored time to the millisecond, or "-" for none.
func fmtTimeMS(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(timeLayoutMS)
}

// fmtAge shows a duration rounded to what a person reads (see
// litequeue.FormatAge).
func fmtAge(d time.Duration) string { return litequeue.FormatAge(d) }

// oneLine returns the first line of s, cut to at most n runes, with "…"
// where anything was left off.
func oneLine(s string, n int) string {
	first, _, more := strings.Cut(s, "\n")
	first = strings.TrimRight(first, " \r")
	if utf8.RuneCountInString(first) > n {
		r := []rune(first)
		return string(r[:n-1]) + "…"
	}
	if more {
		return first + " …"
	}
	return first
}

// orDash returns s, or "-" for the empty string, for a table cell.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// orDashInt shows a count that may be missing.
func orDashInt(n *int) string {
	if n == nil {
		return "-"
	}
	return strconv.Itoa(*n)
}

// plural returns "1 job" or "2 jobs".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// jobJSON is a job in --json output. Times are RFC 3339 in UTC; absent
// times are left out.
type jobJSON struct {
	ID         int64           `json:"id"`
	Queue      string          `json:"queue"`
	Kind       string          `json:"kind"`
	State      litequeue.State `json:"state"`
	Priority   int             `json:"priority"`
	Attempt    int             `json:"attempt"`
	MaxTries   int             `json:"max_tries"`
	RunAt      *time.Time      `json:"run_at,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
	FinishedAt *time.Time      `json:"finished_at,omitempty"`
	LastError  string          `json:"last_error,omitempty"`
	UniqueKey  string          `json:"unique_key,omitempty"`
	ExpiresAt  *time.Time      `json:"expires_at,omitempty"`
	// The payload: as is when it is JSON, else in base64.
	Payload       json.RawMessage `json:"payload,omitempty"`
	PayloadBase64 []byte          `json:"payload_base64,omitempty"`
	// Progress, as the job's handler reported it; none: left out.
	Progress *progressJSON `json:"progress,omitempty"`
	// The output and the checkpoint (show only): as is when JSON, else in
	// base64.
	Output           json.RawMessage `json:"output,omitempty"`
	OutputBase64     []byte          `json:"output_base64,omitempty"`
	Checkpoint       json.RawMessage `json:"checkpoint,omitempty"`
	CheckpointBase64 []byte          `json:"checkpoint_base64,omitempty"`
	// Sealed, for a payload sealed at rest: with which key, and whether it
	// opened. A payload that did not open is left out.
	Sealed *sealedJSON `json:"sealed,omitempty"`
}

// toJobJSON returns j's JSON form, with its payload if withPayload.
func toJobJSON(j *litequeue.Job, withPayload bool) jobJSON {
	out := jobJSON{
		ID: j.ID, Queue: j.Queue, Kind: j.Kind, State: j.State,
		Priority: j.Priority, Attempt: j.Attempt, MaxTries: j.MaxTries,
		RunAt: optTime(j.RunAt), CreatedAt: j.CreatedAt.UTC(), FinishedAt: optTime(j.FinishedAt),
		LastError: j.LastError, UniqueKey: j.UniqueKey, ExpiresAt: optTime(j.ExpiresAt),
		Sealed: sealedOf(j), Progress: toProgressJSON(j.Progress),
	}
	if withPayload && (out.Sealed == nil || out.Sealed.Opened) {
		out.Payload, out.PayloadBase64 = jsonOrBase64(j.Payload)
	}
	return out
}

// jsonOrBase64 returns p as JSON if it is JSON, else as bytes to write in
// base64.
func jsonOrBase64(p []byte) (json.RawMessage, []byte) {
	if json.Valid(p) {
		return p, nil
	}
	return nil, p
}

// optTime returns t in UTC, or nil for the zero time.
func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// progressJSON is a job's progress in --json output.
type progressJSON struct {
	Done  int       `json:"done"`
	Total int       `json:"total"`
	At    time.Time `json:"at"`
}

// toProgressJSON returns p's JSON form; nil for none.
func toProgressJSON(p *litequeue.JobProgress) *progressJSON {
	if p == nil {
		return nil
	}
	return &progressJSON{Done: p.Done, Total: p.Total, At: p.At.UTC()}
}
