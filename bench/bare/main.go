// Command bare is the baseline of the ingestion benchmark: a plain net/http
// server that answers every request with the same 43-byte GIF and headers
// as Beet's ingestion endpoint, and does nothing else.
//
// With -durable FILE it is the durable floor instead: before answering, it
// appends the request's time, path and User-Agent to FILE and waits for a
// group fsync of it, as the least any server must do to acknowledge an
// event durably. It measures what durability alone costs on a machine.
package main

import (
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

var gif = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff\x21\xf9\x04\x01\x00\x00\x00\x00\x2c\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02\x44\x01\x00\x3b")

func main() {
	addr := flag.String("listen", "127.0.0.1:0", "address")
	durable := flag.String("durable", "", "append each request to this file and answer after a group fsync of it (the durable floor)")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	var l *groupLog
	if *durable != "" {
		f, err := os.OpenFile(*durable, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			log.Fatal(err)
		}
		l = newGroupLog(f)
	}
	os.Stdout.WriteString("http://" + ln.Addr().String() + "\n")
	log.Fatal(http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if l != nil {
			if err := l.append(r.URL.Path, r.UserAgent()); err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		h := w.Header()
		h.Set("Content-Type", "image/gif")
		h.Set("Cache-Control", "no-store, no-cache, must-revalidate, max-age=0")
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Methods", "GET, POST, HEAD, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Content-Type")
		h.Set("Cross-Origin-Resource-Policy", "cross-origin")
		h.Set("X-Content-Type-Options", "nosniff")
		w.Write(gif)
	})))
}

// groupLog is a group commit on an append-only file: requests add lines to
// the open group; one goroutine writes a group, fsyncs it and releases its
// requests while the next group fills.
type groupLog struct {
	f    *os.File
	mu   sync.Mutex
	buf  []byte
	open *group // the group buf holds
	kick chan struct{}
}

type group struct {
	done chan struct{} // closed when the group is on disk, or failed
	err  error
}

func newGroupLog(f *os.File) *groupLog {
	l := &groupLog{f: f, open: &group{done: make(chan struct{})}, kick: make(chan struct{}, 1)}
	go l.run()
	return l
}

func (l *groupLog) append(path, ua string) error {
	l.mu.Lock()
	l.buf = strconv.AppendInt(l.buf, time.Now().UnixMicro(), 10)
	l.buf = append(l.buf, ' ')
	l.buf = append(l.buf, path...)
	l.buf = append(l.buf, ' ')
	l.buf = append(l.buf, ua...)
	l.buf = append(l.buf, '\n')
	g := l.open
	l.mu.Unlock()
	select {
	case l.kick <- struct{}{}:
	default:
	}
	<-g.done
	return g.err
}

func (l *groupLog) run() {
	var spare []byte
	for range l.kick {
		l.mu.Lock()
		if len(l.buf) == 0 {
			l.mu.Unlock()
			continue
		}
		buf, g := l.buf, l.open
		l.buf, l.open = spare[:0], &group{done: make(chan struct{})}
		l.mu.Unlock()
		_, g.err = l.f.Write(buf)
		if g.err == nil {
			g.err = l.f.Sync()
		}
		close(g.done)
		spare = buf
	}
}
