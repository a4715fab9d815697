package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/litequeue/litequeue"
)

// demoDB is the demo's database without --db.
const demoDB = "litequeue-demo.db"

// demoPolicy retries fast, so that the tour takes a few seconds:
// exponential from 10ms, capped at 200ms, 4 tries.
var demoPolicy = litequeue.Policy{
	Backoff:  litequeue.Exponential,
	Base:     10 * time.Millisecond,
	Ceiling:  200 * time.Millisecond,
	MaxTries: 4,
	Jitter:   litequeue.FullJitter,
}

// demoKey is the idempotency key that marks a file as the demo's, so that
// a later demo may replace it and never replaces anything else. It is
// marked for demoKeyTTL: for good.
const (
	demoKey    = "litequeue demo"
	demoKeyTTL = 100 * 365 * 24 * time.Hour
)

// The demo's limits.
const (
	demoInvoices = 6
	deadEvery    = 100 // one email address in deadEvery is at deadDomain
	deadDomain   = "old-mail.example"
	demoDeadRows = 12              // dead letters shown at the end
	demoTimeout  = 2 * time.Minute // the tour takes seconds; this catches a hang
)

// demo defines the flags of "demo" and returns the command: a
// self-contained tour on a new database.
func (c *cli) demo(fs *flagSet) runFunc {
	fs.Lookup("db").Usage = "the demo's database `path` (default ./" + demoDB + "; never $LITEQUEUE_DB, as the demo replaces the file)"
	emails := fs.Int("jobs", 500, "how many `N` email jobs to run")
	resume := fs.Bool("resume", false, "run the pending jobs of an earlier demo (those replayed since), with the causes of failure fixed")
	return func(ctx context.Context, _ []string) error {
		if c.config != "" {
			return usageErrorf("the demo takes no --config: it runs on retry policies of its own")
		}
		if *emails < 1 || *emails > 100_000 {
			return usageErrorf("--jobs %d is outside 1…100000", *emails)
		}
		path := c.db // never $LITEQUEUE_DB: the demo replaces its file
		if path == "" {
			path = demoDB
		}
		isDemo, err := isDemoFile(ctx, path)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, demoTimeout)
		defer cancel()
		d := &demoRun{c: c, path: path, emails: *emails, start: time.Now(), done: make(chan struct{})}
		switch {
		case *resume && !isDemo:
			return fmt.Errorf("%s is not a demo database: run the demo first", path)
		case *resume:
			return d.resume(ctx)
		case isDemo:
			if err := removeDB(path); err != nil {
				return err
			}
			fmt.Fprintf(c.stderr, "removed the previous demo's %s\n", path)
		}
		return d.run(ctx)
	}
}

// isDemoFile reports whether path holds an earlier demo's database; it
// is an error for it to hold anything else.
func isDemoFile(ctx context.Context, path string) (bool, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	refuse := fmt.Errorf("%s exists and is not a demo database: leaving it alone (choose another --db)", path)
	q, err := litequeue.OpenReadOnly(path, litequeue.Options{})
	if err != nil {
		return false, refuse
	}
	defer q.Close()
	if ok, err := q.Seen(ctx, demoKey); err != nil || !ok {
		return false, refuse
	}
	return true, nil
}

// removeDB removes a database file and its WAL, shared-memory and
// write-lock files.
func removeDB(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-lock"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// demoRun is one run of the demo.
type demoRun struct {
	c       *cli
	path    string
	emails  int
	start   time.Time
	healthy bool // the causes of failure are fixed (--resume)

	mu                        sync.Mutex
	total                     int // jobs to finish
	finished, retries, deaths int
	done                      chan struct{} // closed when every job is finished
}

// run creates the database, enqueues the jobs, works them to the end with
// a progress bar, and shows what is left: stats, dead letters, and the
// commands to look at them.
func (d *demoRun) run(ctx context.Context) error {
	c := d.c
	d.total = d.emails + demoInvoices
	q, err := d.open()
	if err != nil {
		return err
	}
	defer q.Close()
	if err := q.Mark(ctx, demoKey, demoKeyTTL); err != nil {
		return fmt.Errorf("mark the demo database: %w", err)
	}

	w := c.stdout
	fmt.Fprintf(w, "litequeue demo, in %s\n\n", d.path)
	tw := newTable(w)
	fmt.Fprintf(tw, "  email.send\t%s on queue default; the mail server fails 30%% of sends, retried up to\n", plural(d.emails, "job"))
	fmt.Fprintf(tw, "\t4 tries; and %s (1 address in %d) never answers\n", deadDomain, deadEvery)
	fmt.Fprintf(tw, "  invoice.render\t%d jobs on queue billing; their template is missing: Permanent, dead at once\n", demoInvoices)
	fmt.Fprintf(tw, "  retry policy\t%s\n", describePolicy(demoPolicy))
	fmt.Fprintf(tw, "  workers\t2 Work loops, 8 handlers each\n")
	tw.Flush()
	fmt.Fprintln(w)

	if err := d.enqueue(ctx, q); err != nil {
		return err
	}
	if err := d.work(ctx, q); err != nil {
		return err
	}
	return d.report(ctx, q)
}

// open opens the demo's database with its policy and handlers.
func (d *demoRun) open() (*litequeue.Queue, error) {
	q, err := litequeue.Open(d.path, litequeue.Options{Retry: demoPolicy, OnEvent: d.event})
	if err != nil {
		return nil, err
	}
	q.Handle("email.send", litequeue.JSON(d.sendEmail))
	q.Handle("invoice.render", litequeue.JSON(d.renderInvoice))
	return q, nil
}

// resume runs the pending jobs of an earlier demo, with healthy handlers,
// and shows the stats.
func (d *demoRun) resume(ctx context.Context) error {
	d.healthy = true
	q, err := d.open()
	if err != nil {
		return err
	}
	defer q.Close()
	pending, err := q.List(ctx, litequeue.Filter{State: litequeue.Pending})
	if err != nil {
		return err
	}
	w := d.c.stdout
	if d.total = len(pending); d.total == 0 {
		fmt.Fprintf(w, "No job is pending in %s: replay a dead one first, with\n\n  %s dead retry ID\n",
			d.path, d.c.self+" --db "+shellQuote(d.path))
		return nil
	}
	fmt.Fprintf(w, "The mail server is back and the invoice template restored: running the %s pending in %s.\n\n",
		plural(d.total, "job"), d.path)
	if err := d.work(ctx, q); err != nil {
		return err
	}
	fmt.Fprintf(w, "%s finished in %v: %d retries, %d dead.\n\n",
		plural(d.total, "job"), time.Since(d.start).Round(10*time.Millisecond), d.retries, d.deaths)
	return d.c.showStats(ctx, q, false)
}

// enqueue adds the demo's jobs.
func (d *demoRun) enqueue(ctx context.Context, q *litequeue.Queue) error {
	emails := make([]any, d.emails)
	for i := range emails {
		domain := "example.com"
		if (i+1)%deadEvery == 0 {
			domain = deadDomain
		}
		emails[i] = emailArgs{To: fmt.Sprintf("user%d@%s", i+1, domain), Template: "welcome"}
	}
	if _, err := q.EnqueueMany(ctx, "email.send", emails); err != nil {
		return err
	}
	invoices := make([]any, demoInvoices)
	for i := range invoices {
		invoices[i] = invoiceArgs{Invoice: 1001 + i, Template: "invoice-2019"}
	}
	_, err := q.EnqueueMany(ctx, "invoice.render", invoices, litequeue.OnQueue("billing"))
	return err
}

// work runs two Work loops until every job is completed or dead, drawing
// progress on a terminal.
func (d *demoRun) work(ctx context.Context, q *litequeue.Queue) error {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() {
			errs[i] = q.Work(wctx, litequeue.WorkerOptions{Concurrency: 8, Name: fmt.Sprintf("demo-%d", i+1)})
		})
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case <-d.done:
			waiting = false
		case <-ctx.Done():
			stop()
			wg.Wait()
			return fmt.Errorf("the demo stopped before its jobs were done: %w", context.Cause(ctx))
		case <-tick.C:
			d.progress(false)
		}
	}
	d.progress(true)
	stop()
	wg.Wait()
	return errors.Join(errs...)
}

// event counts the jobs that finish, and notes the dead ones.
func (d *demoRun) event(e litequeue.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch e.Type {
	case "job.retry":
		d.retries++
		return
	case "job.dead":
		d.deaths++
	case "job.completed":
	default:
		return
	}
	if d.finished++; d.finished == d.total {
		close(d.done)
	}
}

// progress draws the progress bar on stderr, on a terminal only; last ends
// its line.
func (d *demoRun) progress(last bool) {
	c := d.c
	if !c.stderrTTY {
		return
	}
	d.mu.Lock()
	finished, retries, deaths := d.finished, d.retries, d.deaths
	d.mu.Unlock()
	const width = 30
	full := finished * width / d.total
	bar := strings.Repeat("█", full) + strings.Repeat("░", width-full)
	fmt.Fprintf(c.stderr, "\r  %s %d/%d jobs finished · %d retries · %d dead · %v ",
		bar, finished, d.total, retries, deaths, time.Since(d.start).Round(10*time.Millisecond))
	if last {
		fmt.Fprintln(c.stderr)
	}
}

// report shows what the demo left: its stats, its dead letters, and the
// commands to inspect and replay them.
func (d *demoRun) report(ctx context.Context, q *litequeue.Queue) error {
	c, w := d.c, d.c.stdout
	fmt.Fprintf(w, "All %d jobs finished in %v: %d retries, %d dead.\n\n",
		d.total, time.Since(d.start).Round(10*time.Millisecond), d.retries, d.deaths)
	if err := c.showStats(ctx, q, false); err != nil {
		return err
	}
	dead, err := q.List(ctx, litequeue.Filter{State: litequeue.Dead})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\ndead letters:\n")
	tw := newTable(w)
	fmt.Fprintln(tw, "  ID\tQUEUE\tKIND\tTRIES\tLAST ERROR")
	for _, j := range dead[:min(len(dead), demoDeadRows)] {
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%d/%d\t%s\n", j.ID, j.Queue, j.Kind, j.Attempt, j.MaxTries, oneLine(j.LastError, 90))
	}
	tw.Flush()
	if len(dead) > demoDeadRows {
		fmt.Fprintf(w, "  … and %d more\n", len(dead)-demoDeadRows)
	}

	// Point at a job that used all its tries, if one did.
	if len(dead) == 0 {
		return nil // the invoices always die; this is for safety's sake
	}
	id := dead[0].ID
	if i := slices.IndexFunc(dead, func(j *litequeue.Job) bool { return j.Attempt > 1 }); i >= 0 {
		id = dead[i].ID
	}
	self := c.self + " --db " + shellQuote(d.path)
	fmt.Fprintf(w, "\nNothing runs a dead job again until someone replays it. Look at them, and replay one:\n\n")
	tw = newTable(w)
	fmt.Fprintf(tw, "  %s dead list\t# the dead letters\n", self)
	fmt.Fprintf(tw, "  %s show %d\t# one job: payload and every attempt\n", self, id)
	fmt.Fprintf(tw, "  %s dead retry %d\t# replay it\n", self, id)
	fmt.Fprintf(tw, "  %s stats\t# the replayed job is due\n", self)
	fmt.Fprintf(tw, "  %s dead retry --all --kind invoice.render --dry-run\t# what a bulk replay would take\n", self)
	fmt.Fprintf(tw, "  %s demo --resume\t# run the replayed jobs, the causes fixed\n", self)
	fmt.Fprintf(tw, "  %s policy simulate --jobs 1000 --outage 30s\t# why retries need jitter\n", c.self)
	tw.Flush()
	fmt.Fprintf(w, "\nRun the demo again to start over; it replaces only its own %s.\n", d.path)
	return nil
}

// shellQuote quotes s for a POSIX shell where it needs it.
func shellQuote(s string) string {
	if regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`).MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// emailArgs is the payload of the demo's email.send jobs.
type emailArgs struct {
	To       string `json:"to"`
	Template string `json:"template"`
}

// smtpError is what the demo's mail server answers when it is busy.
type smtpError struct {
	Code int
	Text string
}

func (e *smtpError) Error() string { return fmt.Sprintf("smtp %d %s", e.Code, e.Text) }

// dialError is what the demo's mail client says when the server does not
// answer.
type dialError struct{ Addr string }

func (e *dialError) Error() string { return fmt.Sprintf("dial tcp %s: i/o timeout", e.Addr) }

// sendEmail is the demo's email.send handler: it takes a few milliseconds
// and, until the demo resumes, fails 30% of the time in one of two ways,
// and every time for an address at deadDomain, whose server is down.
func (d *demoRun) sendEmail(ctx context.Context, job *litequeue.Job, args emailArgs) error {
	if err := pretendWork(ctx, 2*time.Millisecond+rand.N(6*time.Millisecond)); err != nil {
		return err
	}
	if d.healthy {
		return nil
	}
	if strings.HasSuffix(args.To, "@"+deadDomain) {
		return fmt.Errorf("send to %s: %w", args.To, &dialError{"mx." + deadDomain + ":25"})
	}
	switch u := rand.Float64(); {
	case u < 0.2:
		return fmt.Errorf("send to %s: %w", args.To, &smtpError{421, "4.7.0 try again later"})
	case u < 0.3:
		return fmt.Errorf("send to %s: %w", args.To, &dialError{"smtp.example.com:587"})
	}
	return nil
}

// invoiceArgs is the payload of the demo's invoice.render jobs.
type invoiceArgs struct {
	Invoice  int    `json:"invoice"`
	Template string `json:"template"`
}

// templateError reports a template that does not exist.
type templateError struct{ Name string }

func (e *templateError) Error() string { return fmt.Sprintf("template %q not found", e.Name) }

// renderInvoice is the demo's invoice.render handler: until the demo
// resumes, its template is gone, which no retry can fix.
func (d *demoRun) renderInvoice(ctx context.Context, job *litequeue.Job, args invoiceArgs) error {
	if err := pretendWork(ctx, time.Millisecond); err != nil || d.healthy {
		return err
	}
	return litequeue.Permanent(fmt.Errorf("render invoice %d: %w", args.Invoice, &templateError{args.Template}))
}

// pretendWork waits d, or until ctx is done.
func pretendWork(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
