package app

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// startDebug serves Go's profiler on cfg.DebugListen (a loopback address,
// checked by config), apart from the public listener, so that a running
// server can be profiled under real load:
//
//	go tool pprof 'http://127.0.0.1:6060/debug/pprof/profile?seconds=10'
func (a *App) startDebug() error {
	if a.cfg.DebugListen == "" {
		return nil
	}
	ln, err := net.Listen("tcp", a.cfg.DebugListen)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("debug listener failed", "err", err)
		}
	}()
	a.onStop("debug", func(ctx context.Context) error { return srv.Shutdown(ctx) })
	a.log.Info("profiler listening", "url", "http://"+ln.Addr().String()+"/debug/pprof/")
	return nil
}
