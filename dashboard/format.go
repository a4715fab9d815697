package dashboard

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/litequeue/litequeue"
)

// formatFuncs are the templates' functions that format values.
var formatFuncs = map[string]any{
	"dur":  litequeue.FormatDuration,
	"time": showTime,
	"live": func(s litequeue.State) bool { return s == litequeue.Pending || s == litequeue.Running },
}

// showTime writes a time to the second, or "–" for none.
func showTime(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.Format("2006-01-02 15:04:05")
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
