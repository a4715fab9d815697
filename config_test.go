package litequeue_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/litequeue/litequeue"
)

// defaultOptions is what LoadConfig returns for an empty file.
func defaultOptions() litequeue.Options {
	return litequeue.Options{
		Retry:             litequeue.DefaultPolicy(),
		VisibilityTimeout: 30 * time.Second,
		DeadTTL:           14 * 24 * time.Hour,
		KeepFinished:      24 * time.Hour,
		Synchronous:       "full",
		Checkpoint:        "auto",
		MaxPayload:        1 << 20,
		MaxOutput:         1 << 20,
	}
}

func diffOptions(want, got litequeue.Options) string {
	return cmp.Diff(want, got, cmpopts.EquateEmpty())
}

// TestLoadConfig_Design loads the example of DESIGN.md, kept verbatim in
// testdata/litequeue.toml.
func TestLoadConfig_Design(t *testing.T) {
	t.Parallel()
	got, err := litequeue.LoadConfig("testdata/litequeue.toml")
	if err != nil {
		t.Fatal(err)
	}
	want := defaultOptions()
	want.Policies = map[string]litequeue.Policy{"payments": {
		Backoff:  litequeue.Exponential,
		Base:     5 * time.Second,
		Ceiling:  15 * time.Minute,
		MaxTries: 12,
		Jitter:   litequeue.FullJitter,
	}}
	if diff := diffOptions(want, got); diff != "" {
		t.Errorf("LoadConfig mismatch (-want +got):\n%s", diff)
	}
}

func TestLoadConfig_Empty(t *testing.T) {
	t.Parallel()
	for name, text := range map[string]string{
		"empty":    "",
		"comments": "# nothing to see\n\n",
		"tables":   "[retry]\n[queue]\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if diff := diffOptions(defaultOptions(), loadConfig(t, text)); diff != "" {
				t.Errorf("LoadConfig mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadConfig_Inherit(t *testing.T) {
	t.Parallel()
	got := loadConfig(t, `
[retry]
policy = "linear"
base = "1s"
ceiling = "1m"
max_tries = 5
jitter = "equal"
dotted.max_tries = 3
inline = { base = "100ms", ceiling = "2s" }

[retry.slow]
base = "10s"

[retry.same]

[retry.mixed]
policy = "constant"
jitter = "none"
`)
	retry := litequeue.Policy{
		Backoff:  litequeue.Linear,
		Base:     time.Second,
		Ceiling:  time.Minute,
		MaxTries: 5,
		Jitter:   litequeue.EqualJitter,
	}
	with := func(f func(p *litequeue.Policy)) litequeue.Policy {
		p := retry
		f(&p)
		return p
	}
	want := defaultOptions()
	want.Retry = retry
	want.Policies = map[string]litequeue.Policy{
		"dotted": with(func(p *litequeue.Policy) { p.MaxTries = 3 }),
		"inline": with(func(p *litequeue.Policy) { p.Base, p.Ceiling = 100*time.Millisecond, 2*time.Second }),
		"slow":   with(func(p *litequeue.Policy) { p.Base = 10 * time.Second }),
		"same":   retry,
		"mixed":  with(func(p *litequeue.Policy) { p.Backoff, p.Jitter = litequeue.Constant, litequeue.NoJitter }),
	}
	if diff := diffOptions(want, got); diff != "" {
		t.Errorf("LoadConfig mismatch (-want +got):\n%s", diff)
	}
}

// TestLoadConfig_InheritDefaults checks that named policies inherit the
// defaults where [retry] is absent.
func TestLoadConfig_InheritDefaults(t *testing.T) {
	t.Parallel()
	got := loadConfig(t, "retry.once.max_tries = 1\n")
	want := litequeue.DefaultPolicy()
	want.MaxTries = 1
	if diff := cmp.Diff(want, got.Policies["once"]); diff != "" {
		t.Errorf("Policies[once] mismatch (-want +got):\n%s", diff)
	}
}

func TestLoadConfig_Durations(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		text string
		want time.Duration
	}{
		{`"14d"`, 14 * 24 * time.Hour},
		{`"1d12h"`, 36 * time.Hour},
		{`"1.5d"`, 36 * time.Hour},
		{`"0.5d"`, 12 * time.Hour},
		{`"2d30m15s"`, 48*time.Hour + 30*time.Minute + 15*time.Second},
		{`"90m"`, 90 * time.Minute},
		{`"1h30m"`, 90 * time.Minute},
		{`"1500ms"`, 1500 * time.Millisecond},
		{`"100000d"`, 100000 * 24 * time.Hour},
	} {
		t.Run(tt.text, func(t *testing.T) {
			t.Parallel()
			got := loadConfig(t, "[queue]\ndead_ttl = "+tt.text+"\n").DeadTTL
			if got != tt.want {
				t.Errorf("dead_ttl = %s: got %v, want %v", tt.text, got, tt.want)
			}
		})
	}
}

// TestLoadConfig_Errors checks each kind of error, "<file>:<line>: <key>:
// <problem>", on the line of the key at fault.
func TestLoadConfig_Errors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, text string
		want       string // after the file name
	}{
		// Keys that mean nothing.
		{"unknown key", "[retry]\nbase = \"1s\"\nbogus = 1\n",
			`:3: retry.bogus: unknown key`},
		{"unknown key in named policy", "[retry.payments]\n\nmaxtries = 3\n",
			`:3: retry.payments.maxtries: unknown key`},
		{"table in named policy", "[retry.payments]\n[retry.payments.eu]\nbase = \"1s\"\n",
			`:2: retry.payments.eu: unknown table`},
		{"unknown key in queue", "[queue]\nvisibility = \"30s\"\n",
			`:2: queue.visibility: unknown key`},
		{"table in queue", "[queue]\n[queue.emails]\n",
			`:2: queue.emails: unknown table`},
		{"unknown table", "[retry]\n[workers]\nconcurrency = 4\n",
			`:2: workers: unknown table`},
		{"unknown top-level key", "\ndebug = true\n",
			`:2: debug: unknown key`},
		{"policy without a name", "[retry.\"\"]\nmax_tries = 3\n",
			`:1: retry."": a named policy needs a name`},
		{"quoted key", "[retry.\"a.b\"]\n\"max tries\" = 3\n",
			`:2: retry."a.b"."max tries": unknown key`},

		// Values of the wrong type.
		{"string for integer", "[retry]\nmax_tries = \"8\"\n",
			`:2: retry.max_tries: "8" is not an integer`},
		{"float for integer", "[queue]\nmax_payload = 1e6\n",
			`:2: queue.max_payload: 1e+06 is not an integer`},
		{"integer for duration", "[retry]\nbase = 2\n",
			`:2: retry.base: 2 is not a duration string such as "90s" or "14d"`},
		{"integer for string", "[retry]\npolicy = 1\n",
			`:2: retry.policy: 1 is not a string`},
		{"array for string", "[queue]\nsynchronous = [\"full\"]\n",
			`:2: queue.synchronous: an array is not a string`},
		{"value for table", "retry = 5\n",
			`:1: retry: 5 is not a table`},
		{"array of tables", "[[queue]]\n",
			`:1: queue: an array is not a table`},
		{"inline table", "[retry]\nslow = { base = 5 }\n",
			`:2: retry.slow.base: 5 is not a duration string such as "90s" or "14d"`},

		// Durations.
		{"bad unit", "[retry]\nbase = \"2x\"\n",
			`:2: retry.base: "2x" is not a duration such as "90s", "1h30m" or "14d"`},
		{"days not first", "[queue]\ndead_ttl = \"12h1d\"\n",
			`:2: queue.dead_ttl: "12h1d" is not a duration such as "90s", "1h30m" or "14d"`},
		{"days twice", "[queue]\ndead_ttl = \"1d1d\"\n",
			`:2: queue.dead_ttl: "1d1d" is not a duration such as "90s", "1h30m" or "14d"`},
		{"sign after days", "[queue]\ndead_ttl = \"1d-1h\"\n",
			`:2: queue.dead_ttl: "1d-1h" is not a duration such as "90s", "1h30m" or "14d"`},
		{"no number", "[queue]\ndead_ttl = \"d\"\n",
			`:2: queue.dead_ttl: "d" is not a duration such as "90s", "1h30m" or "14d"`},
		{"empty", "[queue]\nkeep_finished = \"\"\n",
			`:2: queue.keep_finished: "" is not a duration such as "90s", "1h30m" or "14d"`},
		{"too many days", "[queue]\ndead_ttl = \"200000d\"\n",
			`:2: queue.dead_ttl: duration "200000d" is over the longest, 106751d`},
		{"too many hours", "[queue]\ndead_ttl = \"99999999999h\"\n",
			`:2: queue.dead_ttl: duration "99999999999h" is over the longest, 106751d`},
		{"days and hours too long", "[queue]\ndead_ttl = \"106751d24h\"\n",
			`:2: queue.dead_ttl: duration "106751d24h" is over the longest, 106751d`},
		{"negative", "[queue]\nkeep_finished = \"-1h\"\n",
			`:2: queue.keep_finished: duration "-1h" is negative`},
		{"negative days", "[retry]\nceiling = \"-1d\"\n",
			`:2: retry.ceiling: duration "-1d" is negative`},

		// Integers that int64 cannot hold: the decoder's problem, with the
		// key and the value.
		{"integer overflow", "[retry]\nbase = \"1s\"\nmax_tries = 99999999999999999999\n",
			`:3: retry.max_tries: 99999999999999999999: decimal number is too large to fit in a 64-bit signed integer`},
		{"negative overflow", "[queue]\nmax_payload = -9_999_999_999_999_999_999 # bytes\n",
			`:2: queue.max_payload: -9_999_999_999_999_999_999: decimal number is too large to fit in a 64-bit signed integer`},
		{"hexadecimal overflow", "[kinds.report]\nmax_running = 0xfffffffffffffffff\n",
			`:2: kinds.report.max_running: 0xfffffffffffffffff: hexadecimal number is too large to fit in a 64-bit signed integer`},
		{"overflow in inline table", "retry = { base = \"1s\", max_tries = 99999999999999999999 }\n",
			`:1: retry.max_tries: 99999999999999999999: decimal number is too large to fit in a 64-bit signed integer`},
		{"overflow in array of tables", "[[retention]]\nqueue = \"a\"\n[[retention]]\nkind = \"b\"\ndead_ttl = [1, 99999999999999999999]\n",
			`:5: retention[1].dead_ttl: 99999999999999999999: decimal number is too large to fit in a 64-bit signed integer`},

		// Zero values: in Options they mean "unset", which a file says by
		// omitting the key.
		{"zero max_tries", "[retry]\nmax_tries = 0 # no retries?\n",
			`:2: retry.max_tries: 0 is not allowed: omit the key to keep the default`},
		{"zero base", "[retry]\nbase = \"0s\"\n",
			`:2: retry.base: "0s" is not allowed: omit the key to keep the default`},
		{"zero ceiling in days", "[retry]\nceiling = \"0d\"\n",
			`:2: retry.ceiling: "0d" is not allowed: omit the key to keep the default`},
		{"empty policy", "[retry]\npolicy = \"\"\n",
			`:2: retry.policy: "" is not allowed: omit the key to keep the default`},
		{"zero in named policy", "[retry.payments]\nmax_tries = 0\n",
			`:2: retry.payments.max_tries: 0 is not allowed: omit the key to inherit the value of [retry]`},
		{"zero in inline policy", "[retry]\nfast = { jitter = \"\" }\n",
			`:2: retry.fast.jitter: "" is not allowed: omit the key to inherit the value of [retry]`},
		{"zero dead_ttl", "[queue]\ndead_ttl = \"0s\" # keep no dead jobs?\n",
			`:2: queue.dead_ttl: "0s" is not allowed: omit the key to keep the default`},
		{"zero max_payload", "[queue]\nmax_payload = 0\n",
			`:2: queue.max_payload: 0 is not allowed: omit the key to keep the default`},
		{"empty synchronous", "[queue]\nsynchronous = \"\"\n",
			`:2: queue.synchronous: "" is not allowed: omit the key to keep the default`},

		// Values out of their limits: the key is the table, the problem
		// names the field.
		{"max_tries over the limit", "[retry]\nbase = \"1s\"\nmax_tries = 80\n",
			`:3: retry: max_tries 80 is over the limit of 50`},
		{"named max_tries over the limit", "[retry.payments]\nbase = \"5s\"\nmax_tries = 51\n",
			`:3: retry.payments: max_tries 51 is over the limit of 50`},
		{"max_tries negative", "[retry]\nmax_tries = -1\n",
			`:2: retry: max_tries -1 is under the minimum of 1`},
		{"ceiling over the limit", "[retry]\nceiling = \"25h\"\n",
			`:2: retry: ceiling 25h0m0s is over the limit of 24h0m0s`},
		{"ceiling in days over the limit", "[retry.slow]\nceiling = \"2d\"\n",
			`:2: retry.slow: ceiling 48h0m0s is over the limit of 24h0m0s`},
		{"base over ceiling", "[retry]\nbase = \"20m\"\n",
			`:2: retry: base 20m0s is over the ceiling of 15m0s`},
		{"ceiling under default base", "[retry]\n\nceiling = \"1s\"\n",
			`:3: retry: base 2s is over the ceiling of 1s`},
		{"ceiling under inherited base", "[retry]\nbase = \"1m\"\n[retry.fast]\nmax_tries = 3\nceiling = \"30s\"\n",
			`:5: retry.fast: base 1m0s is over the ceiling of 30s`},
		{"unknown policy", "[retry.payments]\npolicy = \"fibonacci\"\n",
			`:2: retry.payments: policy "fibonacci" is unknown (want exponential, linear or constant)`},
		{"unknown jitter", "[retry]\njitter = \"half\"\n",
			`:2: retry: jitter "half" is unknown (want full, equal or none)`},
		{"visibility_timeout under the minimum", "[queue]\nvisibility_timeout = \"10us\"\n",
			`:2: queue: visibility_timeout 10µs is under the minimum of 1ms`},
		{"unknown synchronous", "[queue]\nkeep_finished = \"1h\"\nsynchronous = \"off\"\n",
			`:3: queue: synchronous "off" is unknown (want full or normal)`},
		{"unknown checkpoint", "[queue]\ncheckpoint = \"never\"\n",
			`:2: queue: checkpoint "never" is unknown (want auto or off)`},
		{"negative max_payload", "[queue]\nmax_payload = -1\n",
			`:2: queue: max_payload -1 must not be negative`},

		// Not TOML: the decoder's problem, which names the key if any.
		{"unclosed table", "[retry]\nbase = \"1s\"\n[queue\n",
			`:3: expected ']' to close table name`},
		{"missing value", "[retry]\nbase =\n",
			`:2: unexpected character U+000A at start of value`},
		{"duplicate key", "[retry]\nbase = \"1s\"\nbase = \"2s\"\n",
			`:3: key base is already defined`},
		{"duplicate table", "[retry]\n[queue]\n[retry]\n",
			`:3: table retry already exists`},

		// The first problem in the file wins.
		{"first of several", "[queue]\nbogus = 1\n[retry]\nmax_tries = 99\njitter = 3\n",
			`:2: queue.bogus: unknown key`},
		{"first named policy", "[retry.b]\nmax_tries = 99\n[retry.a]\nmax_tries = 98\n",
			`:2: retry.b: max_tries 99 is over the limit of 50`},
		{"first on one line", "retry = { b = { max_tries = 99 }, a = { max_tries = 98 } }\n",
			`:1: retry.a: max_tries 98 is over the limit of 50`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeConfig(t, tt.text)
			_, err := litequeue.LoadConfig(path)
			if err == nil {
				t.Fatalf("LoadConfig(%q): no error, want %q", tt.text, tt.want)
			}
			if got, want := err.Error(), path+tt.want; got != want {
				t.Errorf("LoadConfig(%q):\ngot  %s\nwant %s", tt.text, got, want)
			}
		})
	}
}

func TestLoadConfig_Missing(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "litequeue.toml")
	_, err := litequeue.LoadConfig(path)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadConfig(missing file): got %v, want fs.ErrNotExist", err)
	}
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("LoadConfig(missing file): got %v, want an error naming %s", err, path)
	}
}

// TestLoadConfig_NotAFile loads a config from a directory and from files
// over and at the limit of 1 MiB: only the file at the limit is read.
func TestLoadConfig_NotAFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := litequeue.LoadConfig(dir); err == nil || err.Error() != dir+": it is a directory, not a regular file" {
		t.Errorf("LoadConfig(a directory) = %v, want it refused as a directory", err)
	}
	const limit = 1 << 20
	comments := func(size int) string {
		line := "# " + strings.Repeat("x", 61) + "\n" // 64 bytes
		text := "[retry]\nmax_tries = 3\n"
		text += strings.Repeat(line, (size-len(text))/len(line))
		return text + strings.Repeat("#", size-len(text))
	}
	big := writeConfig(t, comments(limit+1))
	if _, err := litequeue.LoadConfig(big); err == nil || err.Error() != big+": the file of 1048577 bytes is over the limit of 1048576 bytes" {
		t.Errorf("LoadConfig(a file of 1 MiB + 1 byte) = %v, want it refused, naming the limit", err)
	}
	if o, err := litequeue.LoadConfig(writeConfig(t, comments(limit))); err != nil || o.Retry.MaxTries != 3 {
		t.Errorf("LoadConfig(a file of 1 MiB) = max_tries %d, %v; want 3, nil", o.Retry.MaxTries, err)
	}
}

// TestLoadConfig_Kinds reads each key of a [kinds.NAME] table, written as
// tables, dotted keys and inline tables: a breaker = true takes the
// defaults, and a breaker table's omitted keys too.
func TestLoadConfig_Kinds(t *testing.T) {
	t.Parallel()
	got := loadConfig(t, `
[kinds.report]
max_running = 1
rate_limit = 100
rate_per = "1m"
expire_after = "5m"
breaker = true

[kinds.charge.breaker]
failures = 5
ratio = 1
window = "2m"
cooldown = "15s"
max_cooldown = "1h"

[kinds."sms.code"]
expire_after = "1d"
breaker = { ratio = 0.25 }

[kinds]
thumbnail.max_running = 4
`)
	defaults := litequeue.Breaker{
		Failures:    litequeue.DefaultBreakerFailures,
		Ratio:       litequeue.DefaultBreakerRatio,
		Window:      litequeue.DefaultBreakerWindow,
		Cooldown:    litequeue.DefaultBreakerCooldown,
		MaxCooldown: litequeue.DefaultBreakerMaxCooldown,
	}
	quarter := defaults
	quarter.Ratio = 0.25
	want := defaultOptions()
	want.Kinds = map[string]litequeue.KindOptions{
		"report":    {MaxRunning: 1, RateLimit: 100, RatePer: time.Minute, ExpireAfter: 5 * time.Minute, Breaker: &defaults},
		"charge":    {Breaker: &litequeue.Breaker{Failures: 5, Ratio: 1, Window: 2 * time.Minute, Cooldown: 15 * time.Second, MaxCooldown: time.Hour}},
		"sms.code":  {ExpireAfter: 24 * time.Hour, Breaker: &quarter},
		"thumbnail": {MaxRunning: 4},
	}
	if diff := diffOptions(want, got); diff != "" {
		t.Errorf("LoadConfig mismatch (-want +got):\n%s", diff)
	}
}

// TestLoadConfig_KindErrors checks the errors of [kinds], each on the line
// of the key at fault, or of its table where the key is missing.
func TestLoadConfig_KindErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, text string
		want       string // after the file name
	}{
		// Keys and tables that mean nothing.
		{"unknown key", "[kinds.report]\nmax_running = 1\nmax_runing = 2\n",
			`:3: kinds.report.max_runing: unknown key`},
		{"unknown breaker key", "[kinds.report.breaker]\nfailures = 3\nthreshold = 3\n",
			`:3: kinds.report.breaker.threshold: unknown key`},
		{"table in kind", "[kinds.report]\n[kinds.report.limits]\nmax = 1\n",
			`:2: kinds.report.limits: unknown table`},
		{"table in breaker", "[kinds.report.breaker.probe]\n",
			`:1: kinds.report.breaker.probe: unknown table`},
		{"kinds not a table", "\nkinds = 3\n",
			`:2: kinds: 3 is not a table`},
		{"kind not a table", "[kinds]\nreport = 1\n",
			`:2: kinds.report: 1 is not a table`},
		{"kind without a name", "[kinds.\"\"]\nmax_running = 1\n",
			`:1: kinds."": a kind needs a name`},

		// Values of the wrong type, and zeros.
		{"string for max_running", "[kinds.report]\nmax_running = \"1\"\n",
			`:2: kinds.report.max_running: "1" is not an integer`},
		{"duration for rate_limit", "[kinds.report]\nrate_limit = \"100/1m\"\n",
			`:2: kinds.report.rate_limit: "100/1m" is not an integer`},
		{"integer for rate_per", "[kinds.report]\nrate_limit = 100\nrate_per = 60\n",
			`:3: kinds.report.rate_per: 60 is not a duration string such as "90s" or "14d"`},
		{"bad expire_after", "[kinds.report]\nexpire_after = \"5 min\"\n",
			`:2: kinds.report.expire_after: "5 min" is not a duration such as "90s", "1h30m" or "14d"`},
		{"negative expire_after", "[kinds.report]\nexpire_after = \"-5m\"\n",
			`:2: kinds.report.expire_after: duration "-5m" is negative`},
		{"string for breaker", "[kinds.report]\nbreaker = \"on\"\n",
			`:2: kinds.report.breaker: "on" is neither true nor a table`},
		{"string for ratio", "[kinds.report.breaker]\nratio = \"half\"\n",
			`:2: kinds.report.breaker.ratio: "half" is not a number`},
		{"zero max_running", "[kinds.report]\nmax_running = 0\n",
			`:2: kinds.report.max_running: 0 is not allowed: omit the key to have none`},
		{"zero expire_after", "[kinds.report]\nexpire_after = \"0s\"\n",
			`:2: kinds.report.expire_after: "0s" is not allowed: omit the key to have none`},
		{"breaker false", "[kinds.report]\nbreaker = false\n",
			`:2: kinds.report.breaker: false is not allowed: omit the key to have none`},
		{"nan ratio", "[kinds.report.breaker]\nratio = nan\n",
			`:2: kinds.report.breaker.ratio: nan is not a number`},
		{"zero failures", "[kinds.report.breaker]\nfailures = 0\n",
			`:2: kinds.report.breaker.failures: 0 is not allowed: omit the key to keep the default`},
		{"zero ratio", "[kinds.report.breaker]\nratio = 0.0\n",
			`:2: kinds.report.breaker.ratio: 0 is not allowed: omit the key to keep the default`},

		// Values out of their limits: the key is the table, the problem
		// names the field.
		{"negative max_running", "[kinds.report]\nexpire_after = \"1m\"\nmax_running = -1\n",
			`:3: kinds.report: max_running -1 is under the minimum of 1`},
		{"dotted max_running", "\n\nkinds.report.max_running = -2\n",
			`:3: kinds.report: max_running -2 is under the minimum of 1`},
		{"negative rate_limit", "[kinds.report]\nrate_per = \"1m\"\nrate_limit = -5\n",
			`:3: kinds.report: rate_limit -5 is under the minimum of 1`},
		{"rate_per too short", "[kinds.report]\nrate_limit = 5\nrate_per = \"500us\"\n",
			`:3: kinds.report: rate_per 500µs is under the minimum of 1ms`},
		{"rate_limit without rate_per", "\n[kinds.report]\nrate_limit = 5\n",
			`:3: kinds.report: rate_limit 5 is given without rate_per: give both or neither`},
		{"rate_per without rate_limit", "[kinds.report]\nmax_running = 2\nrate_per = \"1m\"\n",
			`:3: kinds.report: rate_per 1m0s is given without rate_limit: give both or neither`},
		{"negative failures", "[kinds.report.breaker]\nwindow = \"1m\"\nfailures = -1\n",
			`:3: kinds.report.breaker: failures -1 is under the minimum of 1`},
		{"ratio over 1", "[kinds.report.breaker]\nratio = 1.5\n",
			`:2: kinds.report.breaker: ratio 1.5 is over the limit of 1`},
		{"negative ratio", "[kinds.report.breaker]\nratio = -0.5\n",
			`:2: kinds.report.breaker: ratio -0.5 must be positive`},
		{"max_cooldown under cooldown", "[kinds.report.breaker]\ncooldown = \"1h\"\nmax_cooldown = \"1m\"\n",
			`:3: kinds.report.breaker: max_cooldown 1m0s is under the minimum of 1h0m0s`},
		{"inline breaker", "[kinds]\nreport = { breaker = { ratio = 2.0 } }\n",
			`:2: kinds.report.breaker: ratio 2 is over the limit of 1`},
		{"quoted kind", "[kinds.\"sms.code\"]\nmax_running = -1\n",
			`:2: kinds."sms.code": max_running -1 is under the minimum of 1`},

		// The first problem in the file wins, not the first kind by name.
		{"first of several", "[kinds.b]\nmax_running = -1\n[kinds.a]\nmax_running = -2\n",
			`:2: kinds.b: max_running -1 is under the minimum of 1`},
		// Limits are checked once the policies pass, as those of
		// [[retention]] are.
		{"retry before kinds", "[kinds.a]\nmax_running = -1\n[retry]\nmax_tries = 99\n",
			`:4: retry: max_tries 99 is over the limit of 50`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeConfig(t, tt.text)
			_, err := litequeue.LoadConfig(path)
			if err == nil {
				t.Fatalf("LoadConfig(%q): no error, want %q", tt.text, tt.want)
			}
			if got, want := err.Error(), path+tt.want; got != want {
				t.Errorf("LoadConfig(%q):\ngot  %s\nwant %s", tt.text, got, want)
			}
		})
	}
}

// TestLoadConfig_Checkpoint reads [queue] checkpoint; a value that is not
// auto or off is a *FieldError that names it and the values allowed.
func TestLoadConfig_Checkpoint(t *testing.T) {
	t.Parallel()
	if o := loadConfig(t, "[queue]\ncheckpoint = \"off\"\n"); o.Checkpoint != "off" {
		t.Errorf("checkpoint = \"off\" loads as %q", o.Checkpoint)
	}
	if o := loadConfig(t, ""); o.Checkpoint != "auto" {
		t.Errorf("no checkpoint key loads as %q, want auto", o.Checkpoint)
	}
	_, err := litequeue.LoadConfig(writeConfig(t, "[queue]\ncheckpoint = \"sometimes\"\n"))
	var fe *litequeue.FieldError
	if !errors.As(err, &fe) || fe.Field != "checkpoint" || fe.Value != "sometimes" || !slices.Equal(fe.Limit.([]string), []string{"auto", "off"}) {
		t.Fatalf("checkpoint = \"sometimes\": %v (%#v); want a *FieldError naming the value and auto, off", err, fe)
	}
	if !strings.Contains(err.Error(), `checkpoint "sometimes" is unknown (want auto or off)`) {
		t.Errorf("error %q", err)
	}
}

// TestLoadConfig_Retention reads [[retention]] rules and "forever": the
// rules come back with their unset times filled in from [queue].
func TestLoadConfig_Retention(t *testing.T) {
	t.Parallel()
	got := loadConfig(t, `[queue]
keep_finished = "2h"
dead_ttl = "forever"

[[retention]]
queue = "audit"
keep_finished = "forever"

[[retention]]
kind = "report"
queue = "audit"
dead_ttl = "30d"
keep_finished = "1d12h"
`)
	want := defaultOptions()
	want.KeepFinished, want.DeadTTL = 2*time.Hour, litequeue.KeepForever
	want.Retention = []litequeue.Retention{
		{Queue: "audit", KeepFinished: litequeue.KeepForever, DeadTTL: litequeue.KeepForever},
		{Queue: "audit", Kind: "report", KeepFinished: 36 * time.Hour, DeadTTL: 30 * 24 * time.Hour},
	}
	if diff := diffOptions(want, got); diff != "" {
		t.Errorf("LoadConfig mismatch (-want +got):\n%s", diff)
	}
}

// TestLoadConfig_RetentionErrors checks the errors of bad rules, each on
// the line of the key or rule it is about.
func TestLoadConfig_RetentionErrors(t *testing.T) {
	t.Parallel()
	rule := func(lines ...string) string { return "[[retention]]\n" + strings.Join(lines, "\n") + "\n" }
	tests := []struct{ name, text, want string }{
		{"unknown key", rule(`queue = "a"`, `keep_finshed = "1h"`),
			`:3: retention[0].keep_finshed: unknown key`},
		{"bad duration", rule(`queue = "a"`) + rule(`kind = "k"`, `dead_ttl = "for ever"`),
			`:5: retention[1].dead_ttl: "for ever" is not a duration such as "90s", "1h30m" or "14d"`},
		{"zero", rule(`queue = "a"`, `dead_ttl = "0s"`),
			`:3: retention[0].dead_ttl: "0s" is not allowed: omit the key to take the value of [queue]`},
		{"not a string", rule(`queue = 3`, `dead_ttl = "1h"`),
			`:2: retention[0].queue: 3 is not a string`},
		{"a table, not an array", "[retention]\nqueue = \"a\"\n",
			`:1: retention: a table is not an array of tables: write each rule as [[retention]]`},
		{"empty rule", rule(`queue = "a"`, `dead_ttl = "1h"`) + rule(`keep_finished = "1h"`),
			`:4: retention[1]: names neither a queue nor a kind (Options.KeepFinished and DeadTTL are the rule for every job)`},
		{"nothing set", "\n" + rule(`kind = "k"`),
			`:2: retention[0]: kind "k" sets neither KeepFinished nor DeadTTL`},
		{"duplicate", rule(`queue = "a"`, `dead_ttl = "1h"`) + rule(`kind = "k"`, `dead_ttl = "1h"`) + rule(`queue = "a"`, `dead_ttl = "2h"`),
			`:7: retention[2]: queue "a", as rule 0 does`},
		{"inline", `retention = [{ queue = "a", dead_ttl = "1h" }, { kind = "k", ttl = "1h" }]` + "\n",
			`:1: retention[1].ttl: unknown key`},
		{"forever in [queue]", "[queue]\nvisibility_timeout = \"forever\"\n",
			`:2: queue.visibility_timeout: "forever" is not a duration such as "90s", "1h30m" or "14d"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeConfig(t, tt.text)
			_, err := litequeue.LoadConfig(path)
			if err == nil {
				t.Fatalf("LoadConfig(%q): no error, want %q", tt.text, tt.want)
			}
			if got, want := err.Error(), path+tt.want; got != want {
				t.Errorf("LoadConfig(%q):\ngot  %s\nwant %s", tt.text, got, want)
			}
		})
	}
}

// writeConfig writes text to a litequeue.toml of its own and returns its
// path.
func writeConfig(tb testing.TB, text string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "litequeue.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// loadConfig loads text as a litequeue.toml and fails the test on error.
func loadConfig(tb testing.TB, text string) litequeue.Options {
	tb.Helper()
	o, err := litequeue.LoadConfig(writeConfig(tb, text))
	if err != nil {
		tb.Fatalf("LoadConfig: %v", err)
	}
	return o
}
