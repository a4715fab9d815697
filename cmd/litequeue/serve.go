package main

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net"

	"github.com/litequeue/litequeue"
	"github.com/litequeue/litequeue/dashboard"
)

// serve defines the flags of "serve" and returns the command: the web
// dashboard of the file, until interrupted. Without --allow-writes it
// opens the file read-only; with it, through OpenExisting, which never
// adopts a file without litequeue's tables.
func (c *cli) serve(fs *flagSet) runFunc {
	addr := fs.String("addr", dashboard.DefaultAddr, "listen on `host:port`; an address beyond loopback needs --token")
	token := fs.String("token", "", "require this `token` of every request (default $LITEQUEUE_TOKEN)")
	writes := fs.Bool("allow-writes", false, "allow replay, cancel and purge from the pages")
	accessLog := fs.Bool("access-log", false, "log every request on stderr (errors and refused requests are logged always)")
	var hosts []string
	fs.Func("allow-host", "without a token, answer requests for this `host` too (e.g. a reverse proxy's name; repeat for more): "+
		"else only localhost and loopback addresses", func(s string) error {
		hosts = append(hosts, s)
		return nil
	})
	return func(ctx context.Context, _ []string) error {
		if *token == "" {
			*token = c.getenv("LITEQUEUE_TOKEN")
		}
		opts := dashboard.ServeOptions{Addr: *addr, Token: *token, AllowedHosts: hosts, AllowWrites: *writes, Clock: c.clock,
			OpenSealed: c.keyFile != "",
			Logger:     slog.New(slog.NewTextHandler(c.stderr, nil)), AccessLog: *accessLog,
			Ready: func(a net.Addr) { fmt.Fprintf(c.stderr, "litequeue: serving http://%s/\n", a) }}
		if err := opts.Check(); err != nil {
			return fs.usageError(err)
		}
		open := c.openRead
		if *writes {
			open = c.openWrite
		}
		if c.config != "" { // else the page shows what the app's workers recorded
			policies, err := c.policies()
			if err != nil {
				return err
			}
			opts.Policies = policies
		}
		q, err := open()
		if err != nil {
			return err
		}
		defer q.Close()
		return dashboard.Serve(ctx, q, opts)
	}
}

// policies returns the retry policies of --config, for "policy" and the
// dashboard's pages: "default" and the named ones; without a config, the
// default policy alone.
func (c *cli) policies() (map[string]litequeue.Policy, error) {
	opts, err := c.options()
	if err != nil {
		return nil, err
	}
	def := opts.Retry
	if c.config == "" {
		def = litequeue.DefaultPolicy()
	}
	policies := map[string]litequeue.Policy{"default": def}
	maps.Copy(policies, opts.Policies)
	return policies, nil
}
