package dashboard

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/benbjohnson/clock"
	"github.com/litequeue/litequeue"
)

// formatFuncs are the templates' functions that format values.
var formatFuncs = map[string]any{
	"dur":        litequeue.FormatDuration,
	"time":       showTime,
	"live":       func(s litequeue.State) bool { return s == litequeue.Pending || s == litequeue.Running },
	"errorLine":  func(s string) string { return firstLine(s, errorLineRunes) },
	"errorBlock": showError,
	"age":        litequeue.FormatAge,
}

// clockFuncs are the templates' functions that place a time against now
// on clk: the time with how long ago, or in how long, it is.
func clockFuncs(clk clock.Clock) map[string]any {
	return map[string]any{
		"when": func(t time.Time) string { return showWhen(t, clk.Now()) },
	}
}

// errorLineRunes is how much of an error a row of the jobs list shows,
// as the command's lists do.
const errorLineRunes = 80

// firstLine returns the first line of s, cut to at most n runes with
// "…" at the end, or followed by " …" when more lines follow. It reads no
// further than it shows.
func firstLine(s string, n int) string {
	line, _, more := strings.Cut(s, "\n")
	line = strings.TrimRight(line, " \r")
	cut, runes := 0, 0
	for i := range line {
		if runes == n-1 {
			cut = i
		}
		if runes == n {
			return line[:cut] + "…"
		}
		runes++
	}
	if more {
		return line + " …"
	}
	return line
}

// errorShown bounds the bytes of an error the job page shows: as much as
// litequeue keeps of a run's error, so that only an error stored before
// that bound (by an older litequeue, or by the app through DB()) is cut.
const errorShown = litequeue.MaxErrorText

// errorView is an error as the job page shows it: at most errorShown
// bytes of it, cut between two characters.
type errorView struct {
	Text string
	Size int // of the whole error, when Text is cut; 0 when not
}

// showError prepares an error for the job page. The template escapes it.
func showError(s string) errorView {
	if len(s) <= errorShown {
		return errorView{Text: s}
	}
	n := errorShown
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return errorView{s[:n], len(s)}
}

// timeLayout writes a time in UTC to the second, as the command does.
const timeLayout = "2006-01-02 15:04:05Z"

// showTime writes a time in UTC to the second, or "–" for none.
func showTime(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format(timeLayout)
}

// showWhen writes a time as showTime does, followed by how long before or
// after now it is: "2026-03-01 09:57:00Z (3m ago)", "(in 1h5m)".
func showWhen(t, now time.Time) string {
	if t.IsZero() {
		return "–"
	}
	d := now.Sub(t)
	switch {
	case d >= time.Second:
		return showTime(t) + " (" + roughly(d) + " ago)"
	case d <= -time.Second:
		return showTime(t) + " (in " + roughly(-d) + ")"
	}
	return showTime(t) + " (now)"
}

// roughly rounds d to what a glance needs: seconds under a minute,
// minutes under a day, hours above.
func roughly(d time.Duration) string {
	switch {
	case d < time.Minute:
		d = d.Round(time.Second)
	case d < 24*time.Hour:
		d = d.Round(time.Minute)
	default:
		d = d.Round(time.Hour)
	}
	return litequeue.FormatDuration(d)
}

// payloadView is a payload as the job page shows it: indented JSON, else
// the text as it is, else the bytes in hex.
type payloadView struct {
	Text string
	As   string // "JSON", "text" or "bytes (hex)"
	Size int
}

// showPayload prepares a payload for the page. The template escapes it.
func showPayload(p []byte) payloadView {
	var b bytes.Buffer
	if json.Indent(&b, p, "", "  ") == nil {
		return payloadView{b.String(), "JSON", len(p)}
	}
	if utf8.Valid(p) {
		return payloadView{string(p), "text", len(p)}
	}
	return payloadView{hex.Dump(p), "bytes (hex)", len(p)}
}
