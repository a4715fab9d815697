package dashboard_test

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/dashboard"
)

// serve runs Serve with opts on a goroutine and returns the address it
// listens on, or the error it returned before it listened. It stops the
// server at the end of the test.
func serve(t *testing.T, q *litequeue.Queue, opts dashboard.ServeOptions) (net.Addr, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	opts.Ready = func(a net.Addr) { ready <- a }
	done := make(chan error, 1)
	go func() { done <- dashboard.Serve(ctx, q, opts) }()
	select {
	case a := <-ready:
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Serve after its ctx was done: %v", err)
			}
		})
		return a, nil
	case err := <-done:
		cancel()
		return nil, err
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("Serve neither listened nor failed")
		return nil, nil
	}
}

func TestServe_BindsLoopbackByDefault(t *testing.T) {
	t.Parallel()
	q := newQueue(t)
	addr, err := serve(t, q, dashboard.ServeOptions{})
	if err != nil {
		// Another program may hold the port: the error must name the default.
		if !strings.Contains(err.Error(), dashboard.DefaultAddr) {
			t.Fatalf("Serve without an address: %v, want it to listen on %s", err, dashboard.DefaultAddr)
		}
		return
	}
	if got := addr.String(); got != dashboard.DefaultAddr {
		t.Errorf("Serve without an address listens on %s, want %s", got, dashboard.DefaultAddr)
	}
}

func TestServe_RefusesOtherAddressesWithoutToken(t *testing.T) {
	t.Parallel()
	q := newQueue(t)
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "192.0.2.1:0", "example.com:0"} {
		_, err := serve(t, q, dashboard.ServeOptions{Addr: addr})
		if err == nil || !strings.Contains(err.Error(), "token") || !strings.Contains(err.Error(), addr) {
			t.Errorf("Serve on %s without a token: %v, want a refusal naming the address and the token", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0", "localhost:0"} {
		if _, err := serve(t, q, dashboard.ServeOptions{Addr: addr}); err != nil && !strings.Contains(err.Error(), "listen") {
			t.Errorf("Serve on loopback %s: %v", addr, err)
		}
	}
	// With a token, every interface.
	a, err := serve(t, q, dashboard.ServeOptions{Addr: "0.0.0.0:0", Token: "s3cret"})
	if err != nil {
		t.Fatalf("Serve on 0.0.0.0 with a token: %v", err)
	}
	if ip := a.(*net.TCPAddr).IP; !ip.IsUnspecified() {
		t.Errorf("Serve on 0.0.0.0 with a token listens on %s", a)
	}
}

func TestHandler_ReadOnlyByDefault(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{})
	_, page := get(t, srv.URL+"/jobs/"+itoa(d.dead.ID))
	if strings.Contains(page, `id="replay"`) || strings.Contains(page, `method="post"`) {
		t.Errorf("a read-only job page offers a form to post:\n%s", page)
	}
	for _, path := range []string{"/jobs/" + itoa(d.dead.ID) + "/replay", "/jobs/" + itoa(d.later.ID) + "/cancel", "/dead/replay", "/dead/purge"} {
		code, body := post(t, srv.URL+path, url.Values{"csrf": {"anything"}, "older": {"0s"}})
		if code != http.StatusForbidden || !strings.Contains(body, "read-only") {
			t.Errorf("POST %s on a read-only dashboard: %d %q, want 403 read-only", path, code, body)
		}
	}
	if got := stateOf(t, d.q, d.dead.ID); got != litequeue.Dead {
		t.Errorf("the dead job is %s after refused writes", got)
	}
	if got := stateOf(t, d.q, d.later.ID); got != litequeue.Pending {
		t.Errorf("the pending job is %s after refused writes", got)
	}
	_, confirm := get(t, srv.URL+"/dead/replay")
	if strings.Contains(confirm, `method="post"`) || !strings.Contains(confirm, "read-only") {
		t.Errorf("a read-only confirmation page offers its form:\n%s", confirm)
	}
}

func TestHandler_WritesOnlyByPost(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{AllowWrites: true})
	for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodDelete} {
		code, _ := do(t, method, srv.URL+"/jobs/"+itoa(d.dead.ID)+"/replay", nil, nil)
		if code != http.StatusMethodNotAllowed {
			t.Errorf("%s of the replay: %d, want 405", method, code)
		}
	}
	// The confirmation pages are GETs that change nothing.
	dead := litequeue.Filter{State: litequeue.Dead}
	before, _ := d.q.Count(t.Context(), dead)
	get(t, srv.URL+"/dead/replay")
	get(t, srv.URL+"/dead/purge?older=0s")
	if n, err := d.q.Count(t.Context(), dead); err != nil || n != before || n == 0 {
		t.Errorf("%d dead jobs (%v) after GETs of the confirmations, want the %d before", n, err, before)
	}
}

func TestHandler_PostsNeedTheCSRFToken(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{AllowWrites: true})
	replay := srv.URL + "/jobs/" + itoa(d.dead.ID) + "/replay"
	for _, form := range []url.Values{{}, {"csrf": {""}}, {"csrf": {"0123abcd"}}} {
		if code, body := post(t, replay, form); code != http.StatusForbidden || !strings.Contains(body, "CSRF") {
			t.Errorf("POST with csrf %q: %d %q, want 403 naming the CSRF token", form.Get("csrf"), code, body)
		}
	}
	if got := stateOf(t, d.q, d.dead.ID); got != litequeue.Dead {
		t.Fatalf("the job is %s after posts without the token", got)
	}
	_, page := get(t, srv.URL+"/jobs/"+itoa(d.dead.ID))
	code, _ := post(t, replay, url.Values{"csrf": {csrf(t, page)}})
	if code != http.StatusSeeOther {
		t.Fatalf("POST with the page's token: %d, want 303 to the job", code)
	}
	if got := stateOf(t, d.q, d.dead.ID); got != litequeue.Pending {
		t.Errorf("the job is %s after the replay, want pending", got)
	}
	// Another dashboard's token is not this one's.
	_, other := get(t, d.server(t, dashboard.Options{AllowWrites: true}).URL+"/jobs/"+itoa(d.xss.ID))
	if code, _ := post(t, srv.URL+"/jobs/"+itoa(d.xss.ID)+"/replay", url.Values{"csrf": {csrf(t, other)}}); code != http.StatusForbidden {
		t.Errorf("POST with another dashboard's token: %d, want 403", code)
	}
}

func TestHandler_TokenOnEveryRequest(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	const token = "k7Qp-2xV"
	srv := d.server(t, dashboard.Options{Token: token, AllowWrites: true})
	paths := []string{"/", "/jobs", "/jobs/" + itoa(d.dead.ID), "/jobs?state=dead", "/policies", "/periodic", "/metrics", "/static/style.css", "/dead/replay", "/nowhere"}
	for _, path := range paths {
		for _, h := range []http.Header{nil, {"Authorization": {"Bearer wrong"}}, {"Authorization": {"Bearer " + token + "x"}}, {"Cookie": {"litequeue_token=" + token[:4]}}} {
			if code, _ := do(t, http.MethodGet, srv.URL+path, nil, h); code != http.StatusUnauthorized {
				t.Errorf("GET %s with %v: %d, want 401", path, h, code)
			}
		}
		if code, _ := do(t, http.MethodGet, srv.URL+path+"?token=nope", nil, nil); code != http.StatusUnauthorized {
			t.Errorf("GET %s?token=nope: %d, want 401", path, code)
		}
		if code, _ := do(t, http.MethodGet, srv.URL+path, nil, http.Header{"Authorization": {"Bearer " + token}}); code == http.StatusUnauthorized {
			t.Errorf("GET %s with the bearer token: 401", path)
		}
	}
	code, _ := post(t, srv.URL+"/jobs/"+itoa(d.dead.ID)+"/replay", url.Values{"token": {token}})
	if code != http.StatusUnauthorized {
		t.Errorf("POST without the token: %d, want 401", code)
	}

	// ?token= once sets a cookie and sends the browser on without it.
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/jobs?state=dead&token="+token, nil)
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/jobs?state=dead" {
		t.Fatalf("GET with ?token=: %d to %q, want 303 to /jobs?state=dead", resp.StatusCode, loc)
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 || cookies[0].Value != token || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookies after ?token=: %+v, want one HttpOnly, SameSite=Strict cookie of the token", cookies)
	}
	if code, _ := do(t, http.MethodGet, srv.URL+"/jobs?state=dead", nil, http.Header{"Cookie": {cookies[0].String()}}); code != http.StatusOK {
		t.Errorf("GET with the cookie: %d, want 200", code)
	}
}

// TestHandler_EscapesEverything reads every page that shows the demo's
// hostile payload, error, kind, queue and metadata: each appears escaped,
// never as markup, and the pages forbid inline scripts.
func TestHandler_EscapesEverything(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{AllowWrites: true})
	pages := []string{"/", "/jobs", "/jobs?state=dead", "/jobs/" + itoa(d.xss.ID), "/jobs/" + itoa(d.dead.ID),
		"/jobs?kind=" + url.QueryEscape(xssKind), "/dead/replay?kind=" + url.QueryEscape(xssKind) + "&error=" + url.QueryEscape(xssError),
		"/jobs?error=" + url.QueryEscape(xssError)}
	for _, path := range pages {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: Content-Security-Policy %q lets inline scripts run", path, csp)
		}
		_, body := get(t, srv.URL+path)
		for _, raw := range []string{xssPayload, xssError, xssKind, xssQueue, "<script>alert", "<img", "<b>", "<i>k", "<u>q"} {
			if strings.Contains(body, raw) {
				t.Errorf("%s holds %q unescaped", path, raw)
			}
		}
	}
	_, job := get(t, srv.URL+"/jobs/"+itoa(d.xss.ID))
	for _, escaped := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;img src=x onerror=&#34;alert(2)&#34;&gt;", "&lt;i&gt;kind&lt;/i&gt;"} {
		if !strings.Contains(job, escaped) {
			t.Errorf("the job page does not show %q", escaped)
		}
	}
}

func TestHandler_LimitsRequestBodies(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{AllowWrites: true})
	big := url.Values{"queue": {strings.Repeat("q", 100<<10)}}
	if code, _ := post(t, srv.URL+"/dead/replay", big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("POST of 100 KiB: %d, want 413", code)
	}
}

func TestServe_LimitsHeaders(t *testing.T) {
	t.Parallel()
	q := newQueue(t)
	addr, err := serve(t, q, dashboard.ServeOptions{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	code, _ := do(t, http.MethodGet, "http://"+addr.String()+"/", nil, http.Header{"X-Big": {strings.Repeat("h", 100<<10)}})
	if code != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("GET with 100 KiB of headers: %d, want 431", code)
	}
	if code, _ := get(t, "http://"+addr.String()+"/"); code != http.StatusOK {
		t.Errorf("GET of the overview: %d", code)
	}
}

// TestHandler_NoErrorDetails closes the queue under the dashboard: its
// pages answer a plain 500 that names no error of the file.
func TestHandler_NoErrorDetails(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{})
	d.q.Close()
	for _, path := range []string{"/", "/jobs", "/jobs/1", "/metrics"} {
		code, body := get(t, srv.URL+path)
		if code != http.StatusInternalServerError || strings.Contains(body, "litequeue:") || strings.Contains(body, "goroutine") {
			t.Errorf("GET %s of a closed queue: %d %q, want a plain 500", path, code, body)
		}
	}
}
