package main

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/internal/pgtest"
	"github.com/litequeue/litequeue/postgres"
)

// The keys of the tests' key files, and their text.
var (
	keyK1 = bytes.Repeat([]byte{1}, litequeue.SealKeySize)
	keyK2 = bytes.Repeat([]byte{2}, litequeue.SealKeySize)
)

const sealedCanary = "canary-4b1d-address"

// writeKeyFile writes text to a key file of the given mode.
func writeKeyFile(t *testing.T, text string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return path
}

// TestKeyFile enqueues a sealed job with --key-file, on a file and on a
// server, and shows and lists it with and without the keys.
func TestKeyFile(t *testing.T) {
	keys := writeKeyFile(t, "# rotated on 2026-03-01\nk2:"+hex.EncodeToString(keyK2)+"\n\n k1 : "+base64.StdEncoding.EncodeToString(keyK1)+"\n", 0o600)
	for _, backend := range []string{"file", "server"} {
		t.Run(backend, func(t *testing.T) {
			db := sealedDB(t, backend)
			c := func(withKeys bool) *cli {
				c := testCLI("")
				c.db = db
				if withKeys {
					c.keyFile = keys
				}
				return c
			}
			r := mustRun(t, c(true), "enqueue", "letter", `{"address":"`+sealedCanary+`"}`)
			var id int64
			if _, err := fmt.Sscanf(r.stdout, "enqueued job %d:", &id); err != nil || !strings.HasSuffix(r.stdout, ", payload sealed with key k2\n") {
				t.Fatalf("enqueue printed %q", r.stdout)
			}
			ids := fmt.Sprint(id)

			r = mustRun(t, c(false), "show", ids)
			if !strings.Contains(r.stdout, "payload:\n  sealed (key k2): --key-file opens it\n") || strings.Contains(r.stdout, sealedCanary) {
				t.Errorf("show without --key-file:\n%s", r.stdout)
			}
			r = mustRun(t, c(true), "show", ids)
			if !strings.Contains(r.stdout, "payload:\n  (sealed at rest with key k2)\n  {\n    \"address\": \""+sealedCanary+"\"\n  }\n") {
				t.Errorf("show with --key-file:\n%s", r.stdout)
			}
			for _, tc := range []struct {
				withKeys bool
				payload  string
			}{
				{false, ""},
				{true, `{"address":"` + sealedCanary + `"}`},
			} {
				r = mustRun(t, c(tc.withKeys), "show", ids, "--json")
				var shown showJSON
				if err := json.Unmarshal([]byte(r.stdout), &shown); err != nil {
					t.Fatal(err)
				}
				want := sealedJSON{Key: "k2", Opened: tc.withKeys}
				var payload bytes.Buffer
				_ = json.Compact(&payload, shown.Job.Payload) // empty for none
				if got := shown.Job; payload.String() != tc.payload || got.PayloadBase64 != nil || got.Sealed == nil || *got.Sealed != want {
					t.Errorf("show --json, keys %v: payload %s, base64 %q, sealed %+v; want payload %s, sealed %+v",
						tc.withKeys, payload.String(), got.PayloadBase64, got.Sealed, tc.payload, want)
				}
				var listed []jobJSON
				if err := json.Unmarshal([]byte(mustRun(t, c(tc.withKeys), "list", "--json").stdout), &listed); err != nil {
					t.Fatal(err)
				}
				last := listed[len(listed)-1]
				if last.ID != id || last.Sealed == nil || *last.Sealed != (sealedJSON{Key: "k2", Opened: tc.withKeys}) {
					t.Errorf("list --json, keys %v: last job %d sealed %+v", tc.withKeys, last.ID, last.Sealed)
				}
			}
		})
	}
}

// sealedDB returns the database of a TestKeyFile run: a new file with the
// fixture's jobs, or a new database on the server with litequeue's tables.
func sealedDB(t *testing.T, backend string) string {
	t.Helper()
	if backend == "file" {
		return newFixture(t).path
	}
	dsn := pgtest.DSN(t)
	q, err := postgres.Open(t.Context(), dsn, litequeue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
	return dsn
}

// TestKeyFile_RawBytes: with --key-file, no plain text of the payloads
// enqueued reaches the file, its WAL or a backup.
func TestKeyFile_RawBytes(t *testing.T) {
	fx := newFixture(t)
	keys := writeKeyFile(t, "k1:"+hex.EncodeToString(keyK1)+"\n", 0o600)
	for i := range 20 {
		c := fx.cli("")
		c.keyFile = keys
		mustRun(t, c, "enqueue", "letter", fmt.Sprintf(`{"address":"%s","n":%d}`, sealedCanary, i))
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	mustRun(t, fx.cli(""), "backup", "--to", backup)
	for _, p := range []string{fx.path, fx.path + "-wal", backup} {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(sealedCanary)) {
			t.Errorf("%s holds the plain text of a payload", filepath.Base(p))
		}
	}
	c := fx.cli("")
	c.db, c.keyFile = backup, keys
	if r := mustRun(t, c, "show", "8"); !strings.Contains(r.stdout, sealedCanary) {
		t.Errorf("show of the backup with --key-file:\n%s", r.stdout)
	}
}

func TestKeyFile_Refused(t *testing.T) {
	fx := newFixture(t)
	k1 := hex.EncodeToString(keyK1)
	for _, tc := range []struct {
		name, text string
		mode       os.FileMode
		code       int
		want       string
	}{
		{"others read it", "k1:" + k1 + "\n", 0o644, exitUsage, "may be read by others than its owner (mode 0644): chmod 600 it"},
		{"no colon", "# keys\nk1 " + k1 + "\n", 0o600, exitUsage, "line 2: want ID:KEY"},
		{"short key", "k1:" + k1[:62] + "\n", 0o600, exitUsage, `line 1: key "k1": neither 64 hex digits nor base64`},
		{"base64 of 16 bytes", "k1:" + base64.StdEncoding.EncodeToString(keyK1[:16]) + "\n", 0o600, exitUsage, `line 1: key "k1": 16 bytes in base64, want 32`},
		{"empty", "# none yet\n", 0o600, exitUsage, "no keys: want one ID:KEY a line"},
		{"an ID twice", "k1:" + k1 + "\nk1:" + hex.EncodeToString(keyK2) + "\n", 0o600, exitFailure, `seal key 1: ID "k1" is also the ID of key 0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fx.cli("")
			c.keyFile = writeKeyFile(t, tc.text, tc.mode)
			r := runCLI(t, c, "show", "1")
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, tc.code, tc.want)
			}
			if strings.Contains(r.stderr, k1[:16]) {
				t.Errorf("the error shows the key: %q", r.stderr)
			}
		})
	}
}

// TestServe_KeyFile: the dashboard of "serve" shows a sealed payload
// opened with --key-file, and as "sealed (key k1)" without.
func TestServe_KeyFile(t *testing.T) {
	fx := newFixture(t)
	keys := writeKeyFile(t, "k1:"+hex.EncodeToString(keyK1)+"\n", 0o600)
	c := fx.cli("")
	c.keyFile = keys
	mustRun(t, c, "enqueue", "letter", `{"address":"`+sealedCanary+`"}`)
	for _, withKeys := range []bool{false, true} {
		c := fx.cli("")
		if withKeys {
			c.keyFile = keys
		}
		s := startServe(t, c, "--addr", "127.0.0.1:0")
		_, body := s.fetch(t, http.MethodGet, "jobs/8", "", nil)
		if got := strings.Contains(body, sealedCanary); got != withKeys || strings.Contains(body, "sealed (key k1)") == withKeys {
			t.Errorf("serve, keys %v: the job page shows the payload %v, %q %v", withKeys, got, "sealed (key k1)", !got)
		}
		if code := s.stop(); code != exitOK {
			t.Errorf("serve exited %d", code)
		}
	}
}
