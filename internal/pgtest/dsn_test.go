package pgtest

import (
	"strings"
	"testing"
)

func TestWithDatabase(t *testing.T) {
	for _, tc := range []struct{ dsn, want string }{
		{"postgres://u:p@127.0.0.1:5432/litequeue?sslmode=disable", "postgres://u:p@127.0.0.1:5432/lq_1?sslmode=disable"},
		{"postgresql://u@localhost", "postgresql://u@localhost/lq_1"},
		{"postgres://u:p%2Fq@h/db", "postgres://u:p%2Fq@h/lq_1"},
		{"host=127.0.0.1 port=5432 dbname=litequeue", "host=127.0.0.1 port=5432 dbname=litequeue dbname=lq_1"},
	} {
		got, err := withDatabase(tc.dsn, "lq_1")
		if err != nil {
			t.Errorf("withDatabase(%q): %v", tc.dsn, err)
			continue
		}
		if got != tc.want {
			t.Errorf("withDatabase(%q) = %q, want %q", tc.dsn, got, tc.want)
		}
	}
}

func TestWithDatabase_BadURLHidesPassword(t *testing.T) {
	_, err := withDatabase("postgres://u:secret@host:port/db", "lq_1")
	if err == nil {
		t.Fatal("withDatabase of a URL with a bad port: nil error")
	}
	if got := err.Error(); got == "" || strings.Contains(got, "secret") {
		t.Errorf("error %q: want one that does not show the password", got)
	}
}
