package testdb

import (
	"io"
	"net"
	"net/url"
	"os"
	"sync"
	"testing"

	"github.com/beethq/beet/internal/sqlstore"
)

// Proxy is a TCP proxy on loopback that a test can cut and restore, to
// take a real database away from the code under test and give it back.
type Proxy struct {
	tb       testing.TB
	upstream string
	addr     string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
}

// NewProxy starts a proxy to upstream (host:port).
func NewProxy(tb testing.TB, upstream string) *Proxy {
	tb.Helper()
	p := &Proxy{tb: tb, upstream: upstream, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	tb.Cleanup(p.Cut)
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.addr }

// Rewrite returns databaseURL with its host:port pointed at the proxy.
func (p *Proxy) Rewrite(databaseURL string) string {
	u, err := url.Parse(databaseURL)
	if err != nil {
		p.tb.Fatal(err)
	}
	u.Host = p.addr
	return u.String()
}

// Cut closes the listener and every connection through it: new
// connections are refused and open ones break, as in an outage.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Restore listens again on the same address.
func (p *Proxy) Restore() {
	p.tb.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.tb.Fatalf("restore proxy on %s: %v", p.addr, err)
	}
	p.serve(ln)
}

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.pipe(c)
		}
	}()
}

func (p *Proxy) pipe(c net.Conn) {
	up, err := net.Dial("tcp", p.upstream)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil { // cut while dialling
		p.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	go func() { io.Copy(up, c); up.Close() }()
	io.Copy(c, up)
	c.Close()
}

// PostgresBehindProxy opens a migrated store on a fresh PostgreSQL schema
// through a Proxy the test cuts and restores to stage an outage, or skips
// the test when PostgreSQL is not configured. direct is the schema's URL
// without the proxy, for a view the outage does not touch.
func PostgresBehindProxy(tb testing.TB) (db *sqlstore.DB, proxy *Proxy, direct string) {
	tb.Helper()
	if os.Getenv(PostgresEnv) == "" {
		tb.Skipf("PostgreSQL outage test skipped: %s is unset", PostgresEnv)
	}
	direct = URL(tb, "postgres")
	u, err := url.Parse(direct)
	if err != nil {
		tb.Fatal(err)
	}
	proxy = NewProxy(tb, u.Host)
	return Open(tb, proxy.Rewrite(direct)), proxy, direct
}
