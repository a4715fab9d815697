package dashboard

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// hostRule is a Host a dashboard without a token answers to, besides the
// loopback names and addresses: a name, and a port unless any will do.
type hostRule struct{ name, port string }

// parseHosts reads the entries of Options.AllowedHosts: a host name or
// an IP address, with or without a port ("queue.example.com",
// "queue.example.com:8443", "[2001:db8::1]"). It refuses anything a Host
// header cannot be, naming it.
func parseHosts(entries []string) ([]hostRule, error) {
	rules := make([]hostRule, len(entries))
	for i, e := range entries {
		name, port := splitHost(e)
		if !validName(name) || port != "" && !validPort(port) || strings.HasSuffix(e, ":") {
			return nil, fmt.Errorf("allowed host %q is not a host name or address with an optional port, such as queue.example.com or queue.example.com:8443", e)
		}
		rules[i] = hostRule{name, port}
	}
	return rules, nil
}

// splitHost splits a Host header, or an allowed host, into its name,
// lower case and without the brackets of an IPv6 address, and its port,
// if any.
func splitHost(host string) (name, port string) {
	if name, port, err := net.SplitHostPort(host); err == nil {
		return strings.ToLower(name), port
	}
	if inner, ok := strings.CutPrefix(host, "["); ok {
		if inner, ok = strings.CutSuffix(inner, "]"); !ok {
			return "", "" // an unclosed bracket: no name
		}
		host = inner
	}
	return strings.ToLower(host), ""
}

// validName reports whether name is an IP address or a DNS name: letters,
// digits, hyphens, underscores and dots.
func validName(name string) bool {
	if name == "" {
		return false
	}
	if net.ParseIP(name) != nil {
		return true
	}
	for _, c := range name {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// validPort reports whether port is a TCP port number.
func validPort(port string) bool {
	n, err := strconv.Atoi(port)
	return err == nil && 0 < n && n <= 65535
}

// allowsHost reports whether a request whose Host header is host may be
// answered without a token: one for a loopback name or address, or a
// name under localhost (which browsers resolve to loopback themselves),
// that no other site's page can be served from; or one the rules allow. A
// page on a name that an attacker rebinds to 127.0.0.1 sends that name.
func allowsHost(rules []hostRule, host string) bool {
	name, port := splitHost(host)
	if isLoopback(name) || strings.HasSuffix(name, ".localhost") {
		return true
	}
	for _, r := range rules {
		if r.name == name && (r.port == "" || r.port == port) {
			return true
		}
	}
	return false
}

// isLoopback reports whether name, in lower case, is localhost or an
// address of 127.0.0.0/8 or ::1.
func isLoopback(name string) bool {
	ip := net.ParseIP(name)
	return name == "localhost" || ip != nil && ip.IsLoopback()
}
