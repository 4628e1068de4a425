package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/server"
	"github.com/beethq/beet/internal/testlog"
)

// slowConn is one misbehaving client: it runs until the server hangs up
// (or the test ends) and records that the server did.
type slowConn struct {
	kind   string
	conn   net.Conn
	cutOff chan struct{} // closed when the server ended the connection
	once   sync.Once
}

func (c *slowConn) hungUp() { c.once.Do(func() { close(c.cutOff) }) }

// TestSlowClientsCutOff (slow loris and friends): clients that trickle
// their headers, trickle their body, or never read their responses are
// cut off by the server's timeouts, and while N of each are connected, a
// normal ping is answered and its event committed: slow clients hold a
// connection and a goroutine for a bounded time, never the ingestion
// writer (the body is read before the event is queued). The timeouts are
// shortened to seconds for the test (app.Options.ServerTimeouts); the
// defaults are in internal/server (10 s, 30 s, 60 s, 120 s).
func TestSlowClientsCutOff(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the server's (shortened) timeouts; skipped in -short")
	}
	ctx := context.Background()
	timeouts := server.Timeouts{ReadHeader: 3 * time.Second, Read: 4 * time.Second, Write: 4 * time.Second, Idle: 5 * time.Second}
	a, err := app.New(ctx, testConfig(t), app.Options{Log: testlog.New(&testlog.Buffer{}), ServerTimeouts: timeouts})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(ctx); err != nil {
		a.Stop(ctx)
		t.Fatal(err)
	}
	defer func() {
		// Bounded: if a slow client were never cut off, its request would
		// keep a graceful shutdown waiting for good.
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		a.Stop(stopCtx)
	}()
	_, key, err := a.Backend().Service.CreateAccount(ctx, "slow@example.com", "correct horse", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	api := func(method, path, body string) []byte {
		req, _ := http.NewRequest(method, a.URL()+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return b
	}
	var bt struct {
		ID    int64
		Token string
	}
	if err := json.Unmarshal(api("POST", "/api/v1/beets", `{"name": "slow clients"}`), &bt); err != nil || bt.Token == "" {
		t.Fatalf("create beet: %v", err)
	}
	u, _ := url.Parse(a.URL())
	ping := "/api/v1/beet/" + bt.Token

	done := make(chan struct{}) // ends the clients' loops when the test does
	defer close(done)
	const n = 20 // of each kind
	var conns []*slowConn
	var started sync.WaitGroup
	open := func(kind string, run func(c *slowConn)) {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		c := &slowConn{kind: kind, conn: conn, cutOff: make(chan struct{})}
		conns = append(conns, c)
		t.Cleanup(func() { conn.Close() })
		started.Add(1)
		go run(c)
	}
	// trickle writes prefix, then one byte of filler every 100 ms until a
	// write fails; a reader notices the server hanging up.
	trickle := func(prefix, filler string) func(c *slowConn) {
		return func(c *slowConn) {
			go func() {
				io.Copy(io.Discard, c.conn) // returns when the server closes
				c.hungUp()
			}()
			_, err := io.WriteString(c.conn, prefix)
			started.Done()
			for i := 0; err == nil; i++ {
				select {
				case <-done:
					return
				case <-c.cutOff:
					return
				case <-time.After(100 * time.Millisecond):
				}
				_, err = io.WriteString(c.conn, filler[i%len(filler):i%len(filler)+1])
			}
			c.hungUp()
		}
	}
	for range n {
		open("trickles its headers", trickle("GET "+ping+" HTTP/1.1\r\nHost: "+u.Host+"\r\n", "X-Slow: yes\r\n"))
		open("trickles its body", trickle("POST "+ping+" HTTP/1.1\r\nHost: "+u.Host+
			"\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n", " "))
		// Never reads: asks for a 45 KB document over and over on one
		// connection; once the socket buffers are full the server's write
		// blocks until the write timeout. A write error here means the
		// server hung up (a reset, since its side still had requests unread).
		open("never reads its responses", func(c *slowConn) {
			req := "GET /api/v1/openapi.json HTTP/1.1\r\nHost: " + u.Host + "\r\n\r\n"
			_, err := io.WriteString(c.conn, req)
			started.Done()
			for err == nil {
				select {
				case <-done:
					return
				default:
				}
				_, err = io.WriteString(c.conn, strings.Repeat(req, 16))
			}
			c.hungUp()
		})
	}
	started.Wait()

	// A normal client is served meanwhile, and its event is committed.
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	res, err := client.Post(a.URL()+ping, "application/json", strings.NewReader(`{"value": 42}`))
	if err != nil {
		t.Fatalf("a normal ping beside %d slow clients: %v", len(conns), err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("a normal ping beside %d slow clients: %d", len(conns), res.StatusCode)
	}
	if events := string(api("GET", "/api/v1/beets/"+itoa(bt.ID)+"/events", "")); !strings.Contains(events, `"value":42`) {
		t.Errorf("the ping beside the slow clients was answered but not recorded: %s", events)
	}
	stillOpen := 0
	for _, c := range conns {
		select {
		case <-c.cutOff:
		default:
			stillOpen++
		}
	}
	t.Logf("the ping was answered and recorded while %d of %d slow clients were connected", stillOpen, len(conns))

	// Every slow client is cut off. The bound is generous (the machine may
	// be busy); the server's timeouts are a few seconds.
	deadline := time.After(2 * time.Minute)
	for _, c := range conns {
		select {
		case <-c.cutOff:
		case <-deadline:
			t.Fatalf("a client that %s was not cut off by the server's timeouts %+v", c.kind, timeouts)
		}
	}
	// And the server still answers.
	res, err = client.Get(a.URL() + ping)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("ping after the slow clients: %v %v", res, err)
	}
	res.Body.Close()
}
