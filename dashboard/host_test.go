package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/dashboard"
)

// through returns the headers of a request through the name host, as a
// browser sends it to a page on that name, with the headers of more.
func through(host string, more ...http.Header) http.Header {
	h := http.Header{"Host": {host}}
	for _, m := range more {
		for k, v := range m {
			h[k] = v
		}
	}
	return h
}

// port is the port of a test server's URL.
func port(tb testing.TB, rawURL string) string {
	tb.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		tb.Fatal(err)
	}
	return u.Port()
}

// TestHandler_RefusesForeignHosts is DNS rebinding: a page on
// rebind.attacker.example, whose name now resolves to 127.0.0.1, asks the
// dashboard for a job's page and posts its form. Without a token the
// dashboard answers only loopback names and addresses: 421, with neither
// the CSRF token nor the job in the body, and the job stays dead.
func TestHandler_RefusesForeignHosts(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	srv := d.server(t, dashboard.Options{AllowWrites: true})
	p := port(t, srv.URL)
	jobPath := "/jobs/" + itoa(d.dead.ID)
	_, page := get(t, srv.URL+jobPath)
	token := csrf(t, page)
	for _, host := range []string{"rebind.attacker.example:" + p, "rebind.attacker.example", "REBIND.attacker.example:" + p,
		"localhost.attacker.example:" + p, "127.0.0.1.nip.io:" + p, "10.0.0.7:" + p, "[2001:db8::1]:" + p, "0.0.0.0:" + p,
		"localhost.:" + p, "xlocalhost:" + p} {
		for _, path := range []string{jobPath, "/", "/metrics", "/static/style.css", "/nowhere"} {
			code, body := do(t, http.MethodGet, srv.URL+path, nil, through(host))
			if code != http.StatusMisdirectedRequest {
				t.Errorf("GET %s with Host %s: %d, want 421", path, host, code)
			}
			if strings.Contains(body, token) || strings.Contains(body, "hostile") || strings.Contains(body, "<html") {
				t.Errorf("GET %s with Host %s answered with the page:\n%.300s", path, host, body)
			}
		}
		code, _ := postWith(t, srv.URL+jobPath+"/replay", url.Values{"csrf": {token}}, through(host))
		if code != http.StatusMisdirectedRequest {
			t.Errorf("POST the replay with Host %s: %d, want 421", host, code)
		}
	}
	if got := stateOf(t, d.q, d.dead.ID); got != litequeue.Dead {
		t.Fatalf("the job is %s after posts through foreign hosts, want dead", got)
	}
	for _, host := range []string{"127.0.0.1:" + p, "127.0.0.1", "127.8.9.10:" + p, "localhost:" + p, "LocalHost:" + p,
		"localhost", "queue.localhost:" + p, "[::1]:" + p, "[::1]"} {
		if code, body := do(t, http.MethodGet, srv.URL+jobPath, nil, through(host)); code != http.StatusOK || !strings.Contains(body, token) {
			t.Errorf("GET the job with Host %s: %d, want 200 and the page", host, code)
		}
	}
}

// TestHandler_TokenOrAllowedHosts: with a token the dashboard answers any
// Host, as in an app's own public server (a rebinding page cannot know the
// token); without, only loopback and the hosts allowed, with or without a
// port, as behind a reverse proxy.
func TestHandler_TokenOrAllowedHosts(t *testing.T) {
	t.Parallel()
	d := newDemo(t)
	const token = "k7Qp-2xV"
	withToken := d.server(t, dashboard.Options{Token: token})
	bearer := http.Header{"Authorization": {"Bearer " + token}}
	if code, _ := do(t, http.MethodGet, withToken.URL+"/jobs", nil, through("queue.example.com", bearer)); code != http.StatusOK {
		t.Errorf("GET with the token through Host queue.example.com: %d, want 200", code)
	}
	if code, _ := do(t, http.MethodGet, withToken.URL+"/jobs", nil, through("queue.example.com")); code != http.StatusUnauthorized {
		t.Errorf("GET without the token through Host queue.example.com: %d, want 401", code)
	}

	proxied := d.server(t, dashboard.Options{AllowedHosts: []string{"Queue.Example.com", "ops.example.com:8443"}})
	for host, want := range map[string]int{
		"queue.example.com":                 http.StatusOK,
		"queue.example.com:443":             http.StatusOK,
		"QUEUE.example.com:8080":            http.StatusOK,
		"ops.example.com:8443":              http.StatusOK,
		"ops.example.com":                   http.StatusMisdirectedRequest,
		"ops.example.com:443":               http.StatusMisdirectedRequest,
		"sub.queue.example.com":             http.StatusMisdirectedRequest,
		"queue.example.com.evil":            http.StatusMisdirectedRequest,
		"localhost:" + port(t, proxied.URL): http.StatusOK,
	} {
		if code, _ := do(t, http.MethodGet, proxied.URL+"/jobs", nil, through(host)); code != want {
			t.Errorf("GET through Host %s with allowed hosts: %d, want %d", host, code, want)
		}
	}
}

// TestNew_RefusesBadAllowedHosts: an allowed host that no Host header can
// be is a programmer's error, as a bad pattern is to http.ServeMux.
func TestNew_RefusesBadAllowedHosts(t *testing.T) {
	t.Parallel()
	q := newQueue(t)
	for _, host := range []string{"", "https://queue.example.com", "queue.example.com/", "queue example.com", "queue.example.com:port", "[::1"} {
		func() {
			defer func() {
				v := recover()
				msg, _ := v.(string)
				if !strings.Contains(msg, "AllowedHosts") || !strings.Contains(msg, host) {
					t.Errorf("New with AllowedHosts %q: panic %v, want one naming the field and the value", host, v)
				}
			}()
			dashboard.New(q, dashboard.Options{AllowedHosts: []string{host}})
		}()
	}
}

// TestHandler_RefusesCrossSitePosts: a form on another site that posts to
// the dashboard is refused, token or not, by what the browser says of it
// (Origin, Sec-Fetch-Site), even when the form carries the right CSRF
// token; the job stays dead. A post from the dashboard's own pages, or
// from no browser, goes through.
func TestHandler_RefusesCrossSitePosts(t *testing.T) {
	t.Parallel()
	for _, token := range []string{"", "k7Qp-2xV"} {
		d := newDemo(t)
		srv := d.server(t, dashboard.Options{AllowWrites: true, Token: token})
		auth := http.Header{}
		if token != "" {
			auth.Set("Authorization", "Bearer "+token)
		}
		_, page := do(t, http.MethodGet, srv.URL+"/jobs/"+itoa(d.dead.ID), nil, auth)
		form := url.Values{"csrf": {csrf(t, page)}}
		replay := srv.URL + "/jobs/" + itoa(d.dead.ID) + "/replay"
		host := strings.TrimPrefix(srv.URL, "http://")
		for _, h := range []http.Header{
			{"Origin": {"http://evil.example"}},
			{"Origin": {"null"}},
			{"Origin": {"http://" + host + ".evil.example"}},
			{"Sec-Fetch-Site": {"cross-site"}},
			{"Sec-Fetch-Site": {"same-site"}, "Origin": {"http://localhost:" + port(t, srv.URL)}},
			{"Sec-Fetch-Site": {"cross-site"}, "Origin": {srv.URL}},
		} {
			code, body := postWith(t, replay, form, through(host, auth, h))
			if code != http.StatusForbidden || !strings.Contains(body, "cross-origin") {
				t.Errorf("token %q: POST with %v: %d %q, want 403 naming the cross-origin request", token, h, code, body)
			}
			if got := stateOf(t, d.q, d.dead.ID); got != litequeue.Dead {
				t.Fatalf("token %q: the job is %s after a cross-site post with %v, want dead", token, got, h)
			}
		}
		own := http.Header{"Origin": {srv.URL}, "Sec-Fetch-Site": {"same-origin"}}
		if code, body := postWith(t, replay, form, through(host, auth, own)); code != http.StatusSeeOther {
			t.Fatalf("token %q: POST from the dashboard's own page: %d %q, want 303", token, code, body)
		}
		if got := stateOf(t, d.q, d.dead.ID); got != litequeue.Pending {
			t.Errorf("token %q: the job is %s after a same-origin replay, want pending", token, got)
		}
	}
}

// TestServe_AllowedHosts serves through Serve with an allowed host, as
// `litequeue serve --allow-host` does, and refuses a bad one before it
// listens.
func TestServe_AllowedHosts(t *testing.T) {
	t.Parallel()
	q := newQueue(t)
	addr, err := serve(t, q, dashboard.ServeOptions{Addr: "127.0.0.1:0", AllowedHosts: []string{"queue.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + addr.String()
	if code, _ := do(t, http.MethodGet, base+"/", nil, through("queue.example.com")); code != http.StatusOK {
		t.Errorf("GET through the allowed host: %d, want 200", code)
	}
	if code, _ := do(t, http.MethodGet, base+"/", nil, through("rebind.attacker.example")); code != http.StatusMisdirectedRequest {
		t.Errorf("GET through a foreign host: %d, want 421", code)
	}
	_, err = serve(t, q, dashboard.ServeOptions{Addr: "127.0.0.1:0", AllowedHosts: []string{"http://queue.example.com"}})
	if err == nil || !strings.Contains(err.Error(), "http://queue.example.com") {
		t.Errorf("Serve with a URL as allowed host: %v, want a refusal naming it", err)
	}
}
