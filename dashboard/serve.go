package dashboard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
)

// DefaultAddr is where [Serve] listens without an address: loopback only.
const DefaultAddr = "127.0.0.1:8080"

// ServeOptions configures [Serve].
type ServeOptions struct {
	// Addr is the host:port to listen on; "": DefaultAddr. An address that
	// is not loopback (127.0.0.0/8, ::1, localhost) — ":8080" listens on
	// every interface — is refused unless Token is set.
	Addr string
	// Token, if set, is required of every request (see [Options.Token]).
	Token string
	// AllowedHosts are the Host values, besides loopback, that the
	// dashboard answers without a token (see [Options.AllowedHosts]).
	AllowedHosts []string
	// AllowWrites enables replay, cancel and purge.
	AllowWrites bool
	// Policies, Clock and Logger are as in [Options].
	Policies map[string]litequeue.Policy
	Clock    clock.Clock
	Logger   *slog.Logger
	// OpenSealed shows the payloads the Queue opened with its keys (see
	// [Options.OpenSealed]).
	OpenSealed bool
	// AccessLog, if set, logs every request through Logger at Info once
	// it is answered: its method, path, query (without a token), status,
	// size, duration and client. false: only errors, panics and refused
	// requests are logged.
	AccessLog bool
	// Ready, if set, is called with the address Serve listens on once it
	// does: the port it was given, if Addr's was 0.
	Ready func(addr net.Addr)
}

// The server's limits: a client that sends its request slowly, or reads
// the answer slowly, is cut off; headers are bounded as bodies are (see
// maxBody).
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 15 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 60 * time.Second
	maxHeaderBytes    = 32 << 10
	shutdownGrace     = 5 * time.Second
)

// Serve runs the dashboard of q on a server of its own until ctx is done,
// then shuts the server down, letting requests in progress end for a few
// seconds. It returns nil after a shutdown, or the error that kept it from
// serving: a refused or unusable address. It is the body of a command
// such as `litequeue serve`.
func Serve(ctx context.Context, q *litequeue.Queue, opts ServeOptions) error {
	if err := opts.Check(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.addr())
	if err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	h := New(q, Options{Token: opts.Token, AllowedHosts: opts.AllowedHosts, AllowWrites: opts.AllowWrites,
		Policies: opts.Policies, Clock: opts.Clock, Logger: opts.Logger, OpenSealed: opts.OpenSealed})
	if opts.AccessLog && opts.Logger != nil {
		h = logRequests(h, opts.Logger)
	}
	srv := newServer(h)
	if opts.Ready != nil {
		opts.Ready(ln.Addr())
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("dashboard: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err = srv.Shutdown(shutdown)
	if e := <-done; !errors.Is(e, http.ErrServerClosed) {
		err = errors.Join(err, e)
	}
	return err
}

// logRequests returns h, logging each request at Info once it is
// answered.
func logRequests(h http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		lw := &loggedWriter{ResponseWriter: w}
		h.ServeHTTP(lw, r)
		query := r.URL.Query()
		if query.Has("token") {
			query.Set("token", "redacted")
		}
		log.Info("litequeue dashboard: request", "method", r.Method, "path", r.URL.Path, "query", query.Encode(),
			"status", lw.code, "bytes", lw.bytes, "duration", time.Since(start), "remote", r.RemoteAddr)
	})
}

// loggedWriter is a ResponseWriter that keeps the status and the size of
// the answer, for the access log.
type loggedWriter struct {
	http.ResponseWriter
	code  int
	bytes int64
}

func (w *loggedWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *loggedWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

// Unwrap gives http.ResponseController the writer underneath.
func (w *loggedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Check returns the error [Serve] would return for o before it listens:
// an address it refuses, or an allowed host that is no host name or
// address. A command checks its flags with it before it opens the queue.
func (o ServeOptions) Check() error {
	if err := checkAddr(o.addr(), o.Token != ""); err != nil {
		return err
	}
	if _, err := parseHosts(o.AllowedHosts); err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	return nil
}

// addr is the address to listen on.
func (o ServeOptions) addr() string {
	if o.Addr == "" {
		return DefaultAddr
	}
	return o.Addr
}

// newServer returns the server of h, with its timeouts and limits.
func newServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}
}

// checkAddr refuses a listening address that is not host:port with a
// port number, or that is not loopback unless a token guards the
// dashboard.
func checkAddr(addr string, token bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("dashboard: address %q: %w (want host:port, such as %s)", addr, err, DefaultAddr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("dashboard: address %q: port %q is not a number from 0 to 65535 (0: any free port)", addr, port)
	}
	if token || isLoopback(strings.ToLower(host)) {
		return nil
	}
	shown := host
	if shown == "" {
		shown = "every interface"
	}
	return fmt.Errorf("dashboard: address %q listens on %s, not only loopback: set a token to serve it beyond this machine, or listen on %s", addr, shown, DefaultAddr)
}
