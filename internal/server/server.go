// Package server runs Beet's HTTP listener: an http.Server with timeouts,
// request logging that never shows a whole secret, panic recovery, the
// liveness and readiness probes, and a graceful shutdown. The routes
// themselves are registered by the surfaces (api, ingest, ui) on the mux the
// composition root hands in.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Timeouts of the http.Server. The ingestion endpoint takes small bodies, so
// short read timeouts cost nothing and bound slow-loris clients.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 120 * time.Second
	maxHeaderBytes    = 64 << 10
)

// Timeouts bound how long a client may take: to send its headers
// (ReadHeader), its whole request (Read), to take the response (Write),
// and to send the next request on a kept-alive connection (Idle). A
// client slower than these is cut off, so slow or stalled clients hold a
// connection and a goroutine for a bounded time (docs/SECURITY.md).
type Timeouts struct {
	ReadHeader, Read, Write, Idle time.Duration
}

// DefaultTimeouts are the timeouts New sets.
var DefaultTimeouts = Timeouts{ReadHeader: readHeaderTimeout, Read: readTimeout, Write: writeTimeout, Idle: idleTimeout}

// Timeouts returns the timeouts in force.
func (s *Server) Timeouts() Timeouts {
	return Timeouts{s.srv.ReadHeaderTimeout, s.srv.ReadTimeout, s.srv.WriteTimeout, s.srv.IdleTimeout}
}

// SetTimeouts replaces the timeouts; call it before Open or Serve. Tests
// shorten them to watch slow clients being cut off.
func (s *Server) SetTimeouts(t Timeouts) {
	s.srv.ReadHeaderTimeout, s.srv.ReadTimeout, s.srv.WriteTimeout, s.srv.IdleTimeout = t.ReadHeader, t.Read, t.Write, t.Idle
}

// Server is an HTTP server bound to a listener. Open binds and serves in the
// background, so a bind error comes back at once and tests can listen on
// 127.0.0.1:0 and read URL.
type Server struct {
	log  *slog.Logger
	srv  *http.Server
	ln   net.Listener
	errc chan error
}

// New returns a Server for h, wrapped in request logging and panic
// recovery, on clean paths (CleanPaths). log must not be nil.
func New(h http.Handler, log *slog.Logger) *Server {
	s := &Server{log: log, errc: make(chan error, 1)}
	s.srv = &http.Server{
		Handler:           CleanPaths(Logging(log, Recover(log, h))),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		// net/http's own complaints (bad TLS handshakes, accept errors)
		// go to the same structured log.
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return s
}

// Open listens on addr and serves in a new goroutine.
func (s *Server) Open(addr string) error {
	ln, err := Listen(addr)
	if err != nil {
		return err
	}
	s.Serve(ln)
	return nil
}

// Listen binds a TCP listener whose connections have no keep-alive probes.
// Go turns them on for every accepted connection by default, four
// setsockopt calls each, as many system calls as the accept itself: in a
// burst of pings on new connections, one a request. The probes find a
// dead peer after 15 s + 9 × 15 s, and the server's own timeouts
// (DefaultTimeouts: idle 120 s, a request 30 s to read and 60 s to
// answer) close such a connection before that.
func Listen(addr string) (net.Listener, error) {
	lc := net.ListenConfig{KeepAlive: -1}
	ln, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// Serve serves on a listener bound already (port 0 resolved before the
// routes were built), in a new goroutine.
func (s *Server) Serve(ln net.Listener) {
	s.ln = ln
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.errc <- err
		}
		close(s.errc)
	}()
}

// Handler is what the server serves: the handler New was given inside
// the request logging and panic recovery.
func (s *Server) Handler() http.Handler { return s.srv.Handler }

// Addr returns the bound address, or nil before Open.
func (s *Server) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// URL returns http://host:port of the bound listener; an unspecified host
// (":8080", "[::]:8080") becomes localhost so the URL can be dialled.
func (s *Server) URL() string {
	a, ok := s.Addr().(*net.TCPAddr)
	if !ok {
		return ""
	}
	host := "localhost"
	if !a.IP.IsUnspecified() {
		host = a.IP.String()
	}
	return "http://" + net.JoinHostPort(host, fmt.Sprint(a.Port))
}

// Err delivers the error that stopped serving, if it stopped for any reason
// other than Shutdown; it is closed when serving ends.
func (s *Server) Err() <-chan error { return s.errc }

// Shutdown stops accepting connections and waits, until ctx ends, for the
// requests in flight; then it closes what is left.
func (s *Server) Shutdown(ctx context.Context) error {
	if s.ln == nil {
		return nil
	}
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.log.Warn("graceful shutdown cut short; closing connections", "err", err)
		err = errors.Join(err, s.srv.Close())
	}
	return err
}
