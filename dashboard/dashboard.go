// Package dashboard serves litequeue's web dashboard: an [http.Handler]
// that an app mounts in its own server, and [Serve], which runs it on a
// server of its own for `litequeue serve`.
//
// The pages are rendered on the server from html/template, with a small
// script that reloads the lists every few seconds (off by a checkbox,
// remembered in the browser); charts are SVG; times show in UTC with how
// long ago they are; a dark theme follows the system's. They show per
// queue the jobs by state and the age of the oldest due job, what is
// paused and since when, the circuit breakers (and their state), the
// limited kinds' running and started runs against their limits, the last
// hour's retries and deaths by kind and error class and per minute, the
// completions, retries and deaths per minute over the last hour and per
// hour over the last day (GET /throughput, from
// [litequeue.Queue.Throughput]), the jobs by state, queue and kind newest first with a search in their error
// text, by ID, by unique key and by a metadata key=value, a job's payload
// and its whole history (and, while it runs, its worker, start, lease and
// timeout), the dead letters, the periodic schedules (GET /periodic), and
// the retry policies with their worst-case schedule and a simulation: those
// the app's workers recorded in the database, saying who and when, with the
// kinds they handle, then those of [Options.Policies]. GET
// /metrics serves the queue's figures to Prometheus (see package
// [github.com/litequeue/litequeue/prom]); GET /healthz answers 200 "ok"
// while the database answers and 503 otherwise, without the token (a load
// balancer's probe carries none), behind the Host check like every
// request.
//
// # Safe by default
//
// The handler is read-only unless [Options.AllowWrites] is set: then a
// job can be replayed, cancelled, run now or deleted, alone or with the
// rows selected in the jobs list, queues and kinds paused and resumed, a
// circuit breaker reset, and the dead letters replayed by filter or purged
// by age, each by a POST form that carries a CSRF token; GET never
// changes anything. A delete of the selected rows, which cannot be
// undone, asks first, as a purge does. A replay or a purge of many acts
// only on the jobs its confirmation counted (see [litequeue.Tally]): if
// jobs died or grew old enough in between, it does nothing and asks
// again with the new count. With [Options.Token] set, every request must
// carry the token: in the Authorization header as a bearer token, or once
// as ?token=, which sets a cookie. Every value from the file (payload,
// kind, queue, error text) is escaped, and the Content-Security-Policy
// lets no inline script run. A panic in a page is logged and answered
// with a plain 500, never a stack trace. [Serve] binds 127.0.0.1 unless
// told otherwise, refuses an address other than loopback without a token,
// and sets timeouts and a limit on request sizes.
//
// # Hosts and origins
//
// Without a token, the handler answers only requests whose Host is a
// loopback name or address (localhost, a name under .localhost,
// 127.0.0.0/8, [::1], with any port) or one of [Options.AllowedHosts],
// and any other with a plain 421 Misdirected Request before it reads
// anything. This stops DNS rebinding: a page on a name that an attacker
// points at 127.0.0.1 is, to the browser, of the same origin as the
// dashboard it then reaches, and could read every page, payloads and
// CSRF token included. Behind a reverse proxy, pass the Host on (nginx:
// proxy_set_header Host $host) and list the proxy's names in
// AllowedHosts (`litequeue serve --allow-host`). With a token, every Host
// is answered: a rebinding page cannot know the token, and an app may
// mount the handler on its own public server.
//
// Token or not, a POST that the browser says comes from another site's
// page — Sec-Fetch-Site cross-site or same-site, or, from a browser that
// does not send it, an Origin other than the Host — is refused with 403,
// whatever form it carries (see [http.CrossOriginProtection]). A request
// from no browser carries neither header, and goes through.
//
// # Mounting
//
//	h := dashboard.New(q, dashboard.Options{Prefix: "/queue"})
//	mux.Handle("/queue/", h)
//	// the pages are at /queue/, the metrics at /queue/metrics
//
// Reached by a name other than localhost, as on an app's own public
// server, the handler needs a Token, or the names in AllowedHosts when the
// app authenticates every request before it reaches the handler.
package dashboard

import (
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"strings"

	"github.com/benbjohnson/clock"

	"github.com/litequeue/litequeue"
)

// Options configures the handler that [New] returns. A zero Options is a
// read-only dashboard at the root path, open to every request that
// reaches it.
type Options struct {
	// Prefix is the path the handler is mounted under, such as "/queue",
	// without a trailing slash; "": the root.
	Prefix string
	// Token, if set, is required of every request (see the package doc).
	Token string
	// AllowedHosts are the Host values, besides loopback names and
	// addresses, that the handler answers when no Token is set: the names
	// a reverse proxy passes on, such as "queue.example.com" (any port)
	// or "queue.example.com:8443" (that port). New panics on an entry that
	// is no host name or address. With a Token, every Host is answered.
	AllowedHosts []string
	// AllowWrites enables the forms that change the database (replay,
	// cancel, run-now, delete, purge, pause, resume, breaker reset);
	// false: read-only.
	AllowWrites bool
	// Policies are retry policies that the policies page shows, by name,
	// complete as [litequeue.LoadConfig] returns them, after those that
	// the app's workers recorded in the database (see
	// [litequeue.Queue.RecordedPolicies]), and marked as given to the
	// dashboard. nil: none; with none recorded either, the page shows
	// the library's default policy, saying that no app recorded it.
	Policies map[string]litequeue.Policy
	// Clock places the charts in time; use the Queue's. nil: the real clock.
	Clock clock.Clock
	// Logger logs the errors and panics of requests; nil: none.
	Logger *slog.Logger
	// OpenSealed shows the payloads sealed at rest (see
	// [litequeue.Options.SealKeys]) that the Queue opened with its keys.
	// false: a sealed payload shows as "sealed (key k2)", whatever keys
	// the Queue holds; so does one the Queue could not open.
	OpenSealed bool
}

// maxBody bounds a request's body: the forms are a few short fields.
const maxBody = 64 << 10

// tokenCookie holds the token in the browser after ?token=.
const tokenCookie = "litequeue_token"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// handler is the dashboard of one Queue.
type handler struct {
	q       *litequeue.Queue
	opts    Options
	hosts   []hostRule                 // Options.AllowedHosts
	origins http.CrossOriginProtection // refuses writes from other sites' pages
	csrf    string                     // the token every POST form carries
	pages   map[string]*template.Template
	mux     *http.ServeMux
}

// New returns the dashboard of q. It reads q on each request, and stops
// working when q is closed. The handler is safe for concurrent use.
func New(q *litequeue.Queue, opts Options) http.Handler {
	h := newHandler(q, opts)
	return http.StripPrefix(h.opts.Prefix, h)
}

// newHandler returns the dashboard of q at the root path; New strips its
// prefix.
func newHandler(q *litequeue.Queue, opts Options) *handler {
	if opts.Clock == nil {
		opts.Clock = clock.New()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Prefix = strings.TrimSuffix(opts.Prefix, "/")
	hosts, err := parseHosts(opts.AllowedHosts)
	if err != nil {
		panic("dashboard: Options.AllowedHosts: " + err.Error())
	}
	h := &handler{q: q, opts: opts, hosts: hosts, csrf: randomToken(), pages: parsePages(opts.Prefix, opts.Clock), mux: http.NewServeMux()}
	static, _ := fs.Sub(staticFS, "static")
	h.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	h.mux.HandleFunc("GET /{$}", h.overview)
	h.mux.HandleFunc("GET /jobs", h.jobs)
	h.mux.HandleFunc("GET /jobs/{id}", h.job)
	h.mux.HandleFunc("GET /dead/replay", h.confirmReplay)
	h.mux.HandleFunc("GET /dead/purge", h.confirmPurge)
	h.mux.HandleFunc("GET /policies", h.policies)
	h.mux.HandleFunc("GET /throughput", h.throughput)
	h.mux.Handle("GET /metrics", metricsHandler(q, opts.Logger))
	h.mux.HandleFunc("POST /jobs/{id}/replay", h.write(h.replay))
	h.mux.HandleFunc("POST /jobs/{id}/cancel", h.write(h.cancel))
	h.mux.HandleFunc("POST /dead/replay", h.write(h.replayDead))
	h.mux.HandleFunc("POST /dead/purge", h.write(h.purgeDead))
	h.routeFlow()
	h.routeWorkers()
	h.routeGraph()
	return h
}

// ServeHTTP checks the Host (without a token), where a write comes from,
// and the token, then serves the page behind headers that keep the
// browser from running or framing anything the page did not mean to, and
// turns a panic into a plain 500.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			h.opts.Logger.Error("litequeue dashboard: panic", "path", r.URL.Path, "panic", v)
			http.Error(w, "internal error", http.StatusInternalServerError)
		}
	}()
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "+
		"form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cache-Control", "no-store")
	if !h.sameHost(w, r) || !h.sameOrigin(w, r) || (!isHealthz(r) && !h.authorized(w, r)) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	h.mux.ServeHTTP(w, r)
}

// sameHost reports whether r may be answered for its Host, and answers
// 421 when it may not: without a token, only a loopback name or address,
// or an allowed host. A page on a name an attacker rebinds to 127.0.0.1
// sends that name, and must read nothing; it cannot know a token.
func (h *handler) sameHost(w http.ResponseWriter, r *http.Request) bool {
	if h.opts.Token != "" || allowsHost(h.hosts, r.Host) {
		return true
	}
	h.opts.Logger.Warn("litequeue dashboard: refused a request for another host (DNS rebinding, or a proxy's host not in the allowed hosts)",
		"host", r.Host, "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
	http.Error(w, fmt.Sprintf("misdirected request: this dashboard does not answer to host %q, only to localhost, "+
		"loopback addresses and the hosts it is told to allow", r.Host), http.StatusMisdirectedRequest)
	return false
}

// sameOrigin reports whether r may change something for where it comes
// from, and answers 403 when it may not: a write that the browser says
// comes from another site's page (Sec-Fetch-Site: cross-site or
// same-site), or whose Origin is not the Host's. A GET changes nothing;
// a request from no browser carries neither header.
func (h *handler) sameOrigin(w http.ResponseWriter, r *http.Request) bool {
	if err := h.origins.Check(r); err == nil {
		return true
	}
	h.opts.Logger.Warn("litequeue dashboard: refused a cross-origin request",
		"origin", r.Header.Get("Origin"), "sec_fetch_site", r.Header.Get("Sec-Fetch-Site"),
		"host", r.Host, "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
	http.Error(w, "forbidden: a cross-origin request (from another site's page) may not change anything here", http.StatusForbidden)
	return false
}

// authorized reports whether r carries the token, if one is set, and
// answers the request when it does not: a 401, or for a GET that gives
// the token as ?token=, a cookie that keeps it and a redirect to the same
// URL without it, so that it stays out of the address bar.
func (h *handler) authorized(w http.ResponseWriter, r *http.Request) bool {
	if h.opts.Token == "" {
		return true
	}
	if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && h.isToken(bearer) {
		return true
	}
	if c, err := r.Cookie(tokenCookie); err == nil && h.isToken(c.Value) {
		return true
	}
	if t := r.URL.Query().Get("token"); r.Method == http.MethodGet && h.isToken(t) {
		http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: t, Path: h.opts.Prefix + "/",
			HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		u := *r.URL
		query := u.Query()
		query.Del("token")
		u.RawQuery = query.Encode()
		http.Redirect(w, r, h.opts.Prefix+u.RequestURI(), http.StatusSeeOther)
		return false
	}
	h.refusedToken(r)
	http.Error(w, "unauthorized: this dashboard needs its token", http.StatusUnauthorized)
	return false
}

// refusedToken logs a request refused for its token, never the token
// it gave: a wrong one as a warning, none at Info (a browser without the
// cookie yet).
func (h *handler) refusedToken(r *http.Request) {
	_, noCookie := r.Cookie(tokenCookie)
	level, msg := slog.LevelInfo, "litequeue dashboard: refused a request without the token"
	if r.Header.Get("Authorization") != "" || noCookie == nil || r.URL.Query().Has("token") {
		level, msg = slog.LevelWarn, "litequeue dashboard: refused a request with a wrong token"
	}
	h.opts.Logger.Log(r.Context(), level, msg, "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
}

// isToken compares s with the token in constant time.
func (h *handler) isToken(s string) bool {
	return subtle.ConstantTimeCompare([]byte(s), []byte(h.opts.Token)) == 1
}

// write wraps the handler of a POST form: refused unless writes are
// allowed and the form carries the CSRF token.
func (h *handler) write(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !h.opts.AllowWrites {
			h.opts.Logger.Info("litequeue dashboard: refused a write: read-only", "path", r.URL.Path, "remote", r.RemoteAddr)
			http.Error(w, "forbidden: this dashboard is read-only", http.StatusForbidden)
			return
		}
		if err := r.ParseForm(); err != nil {
			status := http.StatusBadRequest
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				status = http.StatusRequestEntityTooLarge
			}
			http.Error(w, "bad request: "+err.Error(), status)
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(h.csrf)) != 1 {
			// A form from before a restart, most often: its token was another.
			h.opts.Logger.Info("litequeue dashboard: refused a write without the form's CSRF token", "path", r.URL.Path, "remote", r.RemoteAddr)
			http.Error(w, "forbidden: the form's CSRF token is missing or wrong (reload the page)", http.StatusForbidden)
			return
		}
		next(w, r)
	}
}

// randomToken returns 32 random bytes in hex.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// parsePages parses each page's template with the layout. Links in them
// are written with the path function, which adds the prefix.
func parsePages(prefix string, clk clock.Clock) map[string]*template.Template {
	funcs := template.FuncMap{
		"path": func(p string) string { return prefix + p },
	}
	maps.Copy(funcs, formatFuncs)
	maps.Copy(funcs, clockFuncs(clk))
	funcs["flowForm"] = flowForm
	pages := map[string]*template.Template{}
	for _, name := range []string{"overview", "jobs", "job", "confirm", "policies", "message", "periodic", "throughput", "workers", "graph"} {
		pages[name] = template.Must(template.New("layout.html").Funcs(funcs).
			ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
	return pages
}

// render writes a page, or a plain 500 if it cannot.
func (h *handler) render(w http.ResponseWriter, status int, page string, data any) {
	var b strings.Builder
	if err := h.pages[page].Execute(&b, data); err != nil {
		h.fail(w, fmt.Errorf("render %s: %w", page, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprint(w, b.String())
}

// fail logs err and answers a plain 500 without it: an error from the
// file may say more than the browser needs to know.
func (h *handler) fail(w http.ResponseWriter, err error) {
	h.opts.Logger.Error("litequeue dashboard", "err", err)
	http.Error(w, "internal error (the server's log has the details)", http.StatusInternalServerError)
}
