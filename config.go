package litequeue

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/litequeue/litequeue/internal/store/sqlite"
	"github.com/pelletier/go-toml/v2"
)

// LoadConfig reads the [Options] in a litequeue.toml file:
//
//	[retry]                # the default policy, Options.Retry
//	policy = "exponential" # exponential | linear | constant
//	base = "2s"
//	ceiling = "15m"
//	max_tries = 8
//	jitter = "full"        # full | equal | none
//
//	[retry.payments]       # a named policy, Options.Policies["payments"]
//	base = "5s"
//	max_tries = 12
//
//	[queue]
//	visibility_timeout = "30s"
//	dead_ttl = "14d"
//	keep_finished = "24h"
//	synchronous = "full"   # full | normal
//	checkpoint = "auto"    # auto | off (an external replicator checkpoints)
//	max_payload = 1048576  # bytes
//	max_output = 1048576   # bytes (Options.MaxOutput)
//
//	[[retention]]          # a rule of Options.Retention; one table per rule
//	queue = "audit"        # the queue, the kind, or both, that it is for
//	kind = "invoice"
//	keep_finished = "forever"
//	dead_ttl = "90d"       # an omitted time takes that of [queue]
//
//	[kinds.report]         # Options.Kinds["report"]: see KindOptions
//	max_running = 1        # MaxRunning(1)
//	rate_limit = 100       # RateLimit(100, time.Minute): rate_limit starts
//	rate_per = "1m"        # in any window of rate_per; give both or neither
//	expire_after = "5m"    # WithExpiry(5 * time.Minute)
//	breaker = true         # WithBreaker(Breaker{}), or a table:
//
//	[kinds.charge.breaker] # WithBreaker(Breaker{…}); omitted keys: the defaults
//	failures = 20
//	ratio = 0.5
//	window = "1m"
//	cooldown = "30s"
//	max_cooldown = "10m"
//
// Durations take Go syntax ("1h30m") with d for days of 24 hours as a
// leading unit ("14d", "1d12h", "1.5d"); negative durations are refused.
// keep_finished and dead_ttl, in [queue] and in [[retention]], also take
// "forever" ([KeepForever]). A rule's error names it by its place among the
// rules, from 0, as in "retention[1].dead_ttl". A table of [kinds] sets,
// for its kind's handler, what the HandlerOptions beside each key would,
// and those given to Handle win over it (see [Queue.Handle]); its limits
// are those of the HandlerOptions. A key that is omitted takes its default,
// and an omitted key of a named policy inherits the value of [retry]. A key
// set to a zero value (0, "0s", "") is an error: in Options zero means
// "unset", so in a file it would silently mean the default, and "max_tries
// = 0" or "dead_ttl = \"0s\"" would not do what it says. Every policy is
// validated after its omitted keys are filled in, as [Open] does. An empty
// file gives the defaults. The returned Options carry every value filled
// in, and leave [Options.Clock], [Options.Rand], [Options.Logger],
// [Options.OnEvent] and [Options.EnqueueMiddleware] nil.
//
// An error in the file (an unknown key or table, a value of the wrong type,
// a bad duration, a value over a limit) reads "<file>:<line>: <key>:
// <problem>", on the line of the offending key. For a value over a limit the
// key is the table being checked, the problem names the field, as in
// "litequeue.toml:10: retry.payments: max_tries 80 is over the limit of 50",
// and the error wraps a *[FieldError].
// A file that is not valid TOML gives "<file>:<line>: <problem>", where the
// problem names the key if there is one; a value that TOML cannot hold, such
// as an integer beyond int64, gives "<file>:<line>: <key>: <value>:
// <problem>".
// LoadConfig reads only a regular file (or a symbolic link to one) of at
// most [ConfigSizeLimit] bytes: a directory, a FIFO, a device and a larger
// file are refused, naming the path, before anything is read. A file that
// cannot be read gives the error of the [os] call, which names the path.
func LoadConfig(path string) (Options, error) {
	data, err := readConfig(path)
	if err != nil {
		return Options{}, err
	}
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return Options{}, tomlError(path, data, err)
	}
	c := &configReader{path: path, lines: keyLines(data)}
	o := c.options(doc)
	if err := c.first(); err != nil {
		return Options{}, err
	}
	c.policyErrors(o.resolvePolicies())
	if err := c.first(); err != nil {
		return Options{}, err
	}
	o.fillQueue()
	if err := o.checkQueue(); err != nil {
		return Options{}, c.error(c.fieldError([]string{"queue"}, err))
	}
	rules, err := o.resolveRetention()
	if err != nil {
		return Options{}, c.retentionError(err)
	}
	o.Retention = rules
	c.kindErrors(o.resolveKinds())
	if err := c.first(); err != nil {
		return Options{}, err
	}
	return o, nil
}

// ConfigSizeLimit is the largest litequeue.toml, in bytes, that
// [LoadConfig] reads.
const ConfigSizeLimit = 1 << 20

// readConfig returns the content of the config file at path, which must be
// a regular file (a symbolic link to one will do) of at most
// ConfigSizeLimit bytes. What is not is refused before it is read, or, for
// a device, opened: a FIFO would block the open until a writer came, and a
// device may read forever. The open does not block either, and the file
// opened is checked again, in case another was put in its place.
func readConfig(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkConfigFile(path, fi); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := checkConfigFile(path, fi); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, ConfigSizeLimit+1))
	if err != nil {
		return nil, err
	}
	if len(data) > ConfigSizeLimit {
		return nil, fmt.Errorf("%s: the file is over the limit of %d bytes", path, ConfigSizeLimit)
	}
	return data, nil
}

// checkConfigFile refuses a config file at path, described by fi, that is
// not a regular file or is over ConfigSizeLimit.
func checkConfigFile(path string, fi fs.FileInfo) error {
	switch {
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s: it is %s, not a regular file", path, sqlite.FileType(fi.Mode()))
	case fi.Size() > ConfigSizeLimit:
		return fmt.Errorf("%s: the file of %d bytes is over the limit of %d bytes", path, fi.Size(), ConfigSizeLimit)
	}
	return nil
}

// tomlError turns an error of the TOML decoder about data into
// "<file>:<line>: <problem>". Its problems name the key themselves where
// there is one, as in "key base is already defined"; a problem with a
// value, such as an integer that int64 cannot hold, is given the key and
// the value: "<file>:<line>: <key>: <value>: <problem>".
func tomlError(path string, data []byte, err error) error {
	var de *toml.DecodeError
	if !errors.As(err, &de) {
		return fmt.Errorf("%s: %w", path, err)
	}
	line, column := de.Position()
	problem := strings.TrimPrefix(de.Error(), "toml: ")
	if key, value := valueAt(data, line, column); key != "" {
		return fmt.Errorf("%s:%d: %s: %s: %s", path, line, key, value, problem)
	}
	return fmt.Errorf("%s:%d: %s", path, line, problem)
}

// configReader turns a decoded litequeue.toml into Options, collecting
// errors with the line of the key they are about.
type configReader struct {
	path  string
	lines map[string]int // by dotted key: see keyLines
	errs  []configError
}

// configError is one problem found in the file.
type configError struct {
	line int
	key  string
	err  error
}

// errorf records a problem with the key at path, on its line, or on that
// of the nearest table holding it that has one (the tables of an inline
// array have none of their own).
func (c *configReader) errorf(path []string, format string, args ...any) {
	key := dotted(path)
	line, ok := c.lines[key]
	for p := path; !ok && len(p) > 1; {
		p = p[:len(p)-1]
		line, ok = c.lines[dotted(p)]
	}
	c.errs = append(c.errs, configError{line, key, fmt.Errorf(format, args...)})
}

// first returns the problem recorded first in the file (by line, then
// key), or nil.
func (c *configReader) first() error {
	if len(c.errs) == 0 {
		return nil
	}
	e := slices.MinFunc(c.errs, func(a, b configError) int {
		return cmp.Or(cmp.Compare(a.line, b.line), strings.Compare(a.key, b.key))
	})
	return c.error(e)
}

// error returns e as an error, "<file>:<line>: <key>: <problem>", that
// wraps the problem.
func (c *configReader) error(e configError) error {
	return fmt.Errorf("%s:%d: %s: %w", c.path, e.line, e.key, e.err)
}

// options reads the top-level tables.
func (c *configReader) options(doc map[string]any) Options {
	var o Options
	for key, v := range doc {
		path := []string{key}
		switch key {
		case "retry":
			c.retry(&o, path, c.table(path, v))
		case "queue":
			c.queue(&o, path, c.table(path, v))
		case "retention":
			c.retention(&o, path, v)
		case "kinds":
			c.kinds(&o, path, c.table(path, v))
		default:
			c.unknown(path, v)
		}
	}
	return o
}

// retry reads [retry]: the keys of the default policy, and a sub-table per
// named policy.
func (c *configReader) retry(o *Options, path []string, t map[string]any) {
	for key, v := range t {
		keyPath := append(slices.Clip(path), key)
		if c.policyKey(&o.Retry, keyPath, v) {
			continue
		}
		named, ok := v.(map[string]any)
		if !ok {
			c.unknown(keyPath, v)
			continue
		}
		if key == "" {
			c.errorf(keyPath, "a named policy needs a name")
			continue
		}
		var p Policy
		for k, v := range named {
			if kp := append(slices.Clip(keyPath), k); !c.policyKey(&p, kp, v) {
				c.unknown(kp, v)
			}
		}
		if o.Policies == nil {
			o.Policies = make(map[string]Policy)
		}
		o.Policies[key] = p
	}
}

// policyKey reads one key of a policy into p, and reports whether key is
// one.
func (c *configReader) policyKey(p *Policy, path []string, v any) bool {
	switch path[len(path)-1] {
	case "policy":
		p.Backoff = Backoff(c.str(path, v))
	case "base":
		p.Base = c.duration(path, v)
	case "ceiling":
		p.Ceiling = c.duration(path, v)
	case "max_tries":
		p.MaxTries = c.integer(path, v)
	case "jitter":
		p.Jitter = Jitter(c.str(path, v))
	default:
		return false
	}
	return true
}

// queue reads [queue].
func (c *configReader) queue(o *Options, path []string, t map[string]any) {
	for key, v := range t {
		keyPath := append(slices.Clip(path), key)
		switch key {
		case "visibility_timeout":
			o.VisibilityTimeout = c.duration(keyPath, v)
		case "dead_ttl":
			o.DeadTTL = c.ttl(keyPath, v)
		case "keep_finished":
			o.KeepFinished = c.ttl(keyPath, v)
		case "synchronous":
			o.Synchronous = c.str(keyPath, v)
		case "checkpoint":
			o.Checkpoint = c.str(keyPath, v)
		case "max_payload":
			o.MaxPayload = c.integer(keyPath, v)
		case "max_output":
			o.MaxOutput = c.integer(keyPath, v)
		default:
			c.unknown(keyPath, v)
		}
	}
}

// retention reads the [[retention]] tables, one rule each.
func (c *configReader) retention(o *Options, path []string, v any) {
	list, ok := v.([]any)
	if !ok {
		c.errorf(path, "%s is not an array of tables: write each rule as [[retention]]", describe(v))
		return
	}
	for i, item := range list {
		rulePath := append(slices.Clip(path), index(i))
		t, ok := item.(map[string]any)
		if !ok {
			c.errorf(rulePath, "%s is not a table", describe(item))
			continue
		}
		var r Retention
		for key, v := range t {
			keyPath := append(slices.Clip(rulePath), key)
			switch key {
			case "queue":
				r.Queue = c.str(keyPath, v)
			case "kind":
				r.Kind = c.str(keyPath, v)
			case "keep_finished":
				r.KeepFinished = c.ttl(keyPath, v)
			case "dead_ttl":
				r.DeadTTL = c.ttl(keyPath, v)
			default:
				c.unknown(keyPath, v)
			}
		}
		o.Retention = append(o.Retention, r)
	}
}

// retentionError places the problem of a rule of [[retention]] on the
// line of its field, or of its table.
func (c *configReader) retentionError(err error) error {
	var re *ruleError
	if !errors.As(err, &re) {
		return err
	}
	path := []string{"retention", index(re.Index)}
	if fe := (*FieldError)(nil); errors.As(re.Err, &fe) {
		return c.error(c.fieldError(path, fe))
	}
	key := dotted(path)
	return c.error(configError{c.lines[key], key, re.Err})
}

// kinds reads [kinds]: a table per kind.
func (c *configReader) kinds(o *Options, path []string, t map[string]any) {
	for kind, v := range t {
		kindPath := append(slices.Clip(path), kind)
		t, ok := v.(map[string]any)
		switch {
		case !ok:
			c.errorf(kindPath, "%s is not a table", describe(v))
			continue
		case kind == "":
			c.errorf(kindPath, "a kind needs a name")
			continue
		}
		var k KindOptions
		for key, v := range t {
			keyPath := append(slices.Clip(kindPath), key)
			switch key {
			case "max_running":
				k.MaxRunning = c.integer(keyPath, v)
			case "rate_limit":
				k.RateLimit = c.integer(keyPath, v)
			case "rate_per":
				k.RatePer = c.duration(keyPath, v)
			case "expire_after":
				k.ExpireAfter = c.duration(keyPath, v)
			case "breaker":
				k.Breaker = c.breaker(keyPath, v)
			default:
				c.unknown(keyPath, v)
			}
		}
		if o.Kinds == nil {
			o.Kinds = make(map[string]KindOptions)
		}
		o.Kinds[kind] = k
	}
}

// breaker reads the breaker of a kind: true for the defaults, or a table.
func (c *configReader) breaker(path []string, v any) *Breaker {
	var b Breaker
	switch v := v.(type) {
	case bool:
		if !v {
			c.zero(path, v)
		}
		return &b
	case map[string]any:
		for key, v := range v {
			keyPath := append(slices.Clip(path), key)
			switch key {
			case "failures":
				b.Failures = c.integer(keyPath, v)
			case "ratio":
				b.Ratio = c.float(keyPath, v)
			case "window":
				b.Window = c.duration(keyPath, v)
			case "cooldown":
				b.Cooldown = c.duration(keyPath, v)
			case "max_cooldown":
				b.MaxCooldown = c.duration(keyPath, v)
			default:
				c.unknown(keyPath, v)
			}
		}
		return &b
	}
	c.errorf(path, "%s is neither true nor a table", describe(v))
	return nil
}

// kindErrors records the problems of the kinds of [kinds], each on the
// line of its field, or of its table.
func (c *configReader) kindErrors(errs []*kindError) {
	for _, err := range errs {
		c.errs = append(c.errs, c.fieldError(err.path(), err.Err))
	}
}

// policyErrors records the problems of the policies, each on the line of
// its policy's table or of a key of it.
func (c *configReader) policyErrors(errs []*FieldError) {
	for _, err := range errs {
		path := []string{"retry"}
		if err.Policy != "" {
			path = append(path, err.Policy)
		}
		c.errs = append(c.errs, c.fieldError(path, err))
	}
}

// fieldError places err, found checking the table at path, on the line
// of the first field it is about that the table sets, as ceiling in
// "base 5s is over the ceiling of 1s" where base is inherited; failing
// that, on the table's line.
func (c *configReader) fieldError(path []string, err *FieldError) configError {
	key := dotted(path)
	line := c.lines[key]
	for _, field := range err.fields() {
		if l, ok := c.lines[dotted(append(slices.Clip(path), field))]; ok {
			line = l
			break
		}
	}
	return configError{line, key, err}
}

// table returns v as a table, or records that it is not one.
func (c *configReader) table(path []string, v any) map[string]any {
	t, ok := v.(map[string]any)
	if !ok {
		c.errorf(path, "%s is not a table", describe(v))
	}
	return t
}

// unknown records that the key at path has no meaning.
func (c *configReader) unknown(path []string, v any) {
	if _, ok := v.(map[string]any); ok {
		c.errorf(path, "unknown table")
		return
	}
	c.errorf(path, "unknown key")
}

// str returns v as a string, or records that it is not one or is empty.
func (c *configReader) str(path []string, v any) string {
	s, ok := v.(string)
	switch {
	case !ok:
		c.errorf(path, "%s is not a string", describe(v))
	case s == "":
		c.zero(path, v)
	}
	return s
}

// integer returns v as an int, or records that it is not one or is zero.
func (c *configReader) integer(path []string, v any) int {
	n, ok := v.(int64)
	switch {
	case !ok:
		c.errorf(path, "%s is not an integer", describe(v))
	case int64(int(n)) != n:
		c.errorf(path, "%d is out of range", n)
	case n == 0:
		c.zero(path, v)
	}
	return int(n)
}

// float returns v as a float64 (an integer will do), or records that it
// is not a number (nan is not) or is zero.
func (c *configReader) float(path []string, v any) float64 {
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case int64:
		f = float64(n)
	default:
		c.errorf(path, "%s is not a number", describe(v))
		return 0
	}
	switch {
	case math.IsNaN(f):
		c.errorf(path, "nan is not a number")
	case f == 0:
		c.zero(path, v)
	}
	return f
}

// ttl is duration for a retention time, which may also be "forever":
// KeepForever.
func (c *configReader) ttl(path []string, v any) time.Duration {
	if v == "forever" {
		return KeepForever
	}
	return c.duration(path, v)
}

// duration returns v as a duration, or records why it is not one, or that
// it is zero.
func (c *configReader) duration(path []string, v any) time.Duration {
	s, ok := v.(string)
	if !ok {
		c.errorf(path, "%s is not a duration string such as \"90s\" or \"14d\"", describe(v))
		return 0
	}
	d, err := ParseDuration(s)
	switch {
	case err != nil:
		c.errorf(path, "%v", err)
	case d == 0:
		c.zero(path, v)
	}
	return d
}

// zero records that the key at path is set to its zero value, which
// Options read as unset: a file leaves a key unset by omitting it.
func (c *configReader) zero(path []string, v any) {
	instead := "keep the default"
	switch {
	case len(path) > 2 && path[0] == "retry":
		instead = "inherit the value of [retry]"
	case path[0] == "retention":
		instead = "take the value of [queue]"
	case path[0] == "kinds" && len(path) == 3:
		instead = "have none"
	}
	c.errorf(path, "%s is not allowed: omit the key to %s", describe(v), instead)
}

// describe shows a decoded TOML value in an error.
func describe(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case map[string]any:
		return "a table"
	case []any:
		return "an array"
	}
	return fmt.Sprint(v)
}
