package main

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/litequeue/litequeue"
)

// The --key-file: the keys that open the payloads sealed at rest (see
// litequeue.Options.SealKeys), and seal those that enqueue adds.

// keyFileUsage is the usage of --key-file.
const keyFileUsage = "open sealed payloads with the keys in `file`, one ID:KEY a line (KEY: 32 bytes in hex or base64); " +
	"the first seals what enqueue adds. Only its owner may read it"

// readKeyFile reads the seal keys of the file at path: one "ID:KEY" a
// line, KEY being 32 bytes as 64 hex digits or in standard base64; blank
// lines and lines that begin with # are skipped. It refuses, as ssh does
// a private key, a file that its group or others may read or write; on
// Windows, whose permissions a mode does not tell, it does not look.
func readKeyFile(path string) ([]litequeue.SealKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return nil, fmt.Errorf("%s may be read by others than its owner (mode %04o): chmod 600 it", path, perm)
	}
	keys, err := parseKeys(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return keys, nil
}

// parseKeys reads the lines of a key file. Its errors name the line,
// never the key.
func parseKeys(r io.Reader) ([]litequeue.SealKey, error) {
	var keys []litequeue.SealKey
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, text, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: want ID:KEY", n)
		}
		key, err := decodeKey(strings.TrimSpace(text))
		if err != nil {
			return nil, fmt.Errorf("line %d: key %q: %w", n, strings.TrimSpace(id), err)
		}
		keys = append(keys, litequeue.SealKey{ID: strings.TrimSpace(id), Key: key})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("no keys: want one ID:KEY a line")
	}
	return keys, nil
}

// decodeKey decodes a key written as 64 hex digits or in base64.
func decodeKey(s string) ([]byte, error) {
	if len(s) == 2*litequeue.SealKeySize {
		if b, err := hex.DecodeString(s); err == nil {
			return b, nil
		}
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("neither %d hex digits nor base64", 2*litequeue.SealKeySize)
	}
	if len(b) != litequeue.SealKeySize {
		return nil, fmt.Errorf("%d bytes in base64, want %d", len(b), litequeue.SealKeySize)
	}
	return b, nil
}

// sealedJSON says, in --json output, that a job's payload is sealed at
// rest, with which key, and whether the payload beside it is opened.
type sealedJSON struct {
	Key    string `json:"key"`
	Opened bool   `json:"opened"`
}

// sealedOf returns the sealedJSON of j, nil if its payload is not sealed.
func sealedOf(j *litequeue.Job) *sealedJSON {
	key, opened := j.Sealed()
	if key == "" {
		return nil
	}
	return &sealedJSON{Key: key, Opened: opened}
}

// writeSealed writes, for "show", a sealed payload that did not open in
// place of the payload, and reports whether it did.
func (c *cli) writeSealed(j *litequeue.Job) bool {
	key, opened := j.Sealed()
	switch {
	case key == "":
		return false
	case opened:
		fmt.Fprintf(c.stdout, "  (sealed at rest with key %s)\n", key)
		return false
	case c.keyFile == "":
		fmt.Fprintf(c.stdout, "  sealed (key %s): --key-file opens it\n", key)
	default:
		fmt.Fprintf(c.stdout, "  sealed (key %s): it does not open with the keys of %s\n", key, c.keyFile)
	}
	return true
}

// sealNote is what "enqueue" adds about a payload it sealed.
func sealNote(j *litequeue.Job) string {
	if key, _ := j.Sealed(); key != "" {
		return ", payload sealed with key " + key
	}
	return ""
}
