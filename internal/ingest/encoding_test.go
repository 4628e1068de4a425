package ingest_test

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/ingest"
)

// TestCompressedBodies: a body sent with Content-Encoding gzip or deflate
// (curl -H 'Content-Encoding: gzip' --data-binary @out.gz) is read
// decompressed: its value and message are kept, a bomb costs no more than
// MaxBody bytes of it, and a body that is not what it says, or in an
// encoding Beet does not read, is recorded without it and noted.
func TestCompressedBodies(t *testing.T) {
	r := newRig(t, "sqlite", nil)
	b := r.newBeet(false)
	gz := func(s string) []byte {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		io.WriteString(w, s)
		w.Close()
		return buf.Bytes()
	}
	post := func(encoding, contentType string, body []byte) *beet.Event {
		t.Helper()
		r.clock.Advance(time.Second)
		req, _ := http.NewRequest("POST", r.srv.URL+ingest.Prefix+b.Token, bytes.NewReader(body))
		req.Header.Set("Content-Encoding", encoding)
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("User-Agent", "curl/8")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		gif, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !bytes.Equal(gif, gif43) {
			t.Fatalf("%s body: %d, want the GIF", encoding, res.StatusCode)
		}
		return r.events(b)[0]
	}
	if e := post("gzip", "application/json", gz(`{"value": 42.5, "message": "42.5 orders"}`)); e.Value == nil || *e.Value != 42.5 || e.Message != "42.5 orders" {
		t.Errorf("gzip JSON: value %v, message %q", e.Value, e.Message)
	}
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	io.WriteString(zw, "backup done: 3 files")
	zw.Close()
	if e := post("deflate", "text/plain", z.Bytes()); e.Message != "backup done: 3 files" {
		t.Errorf("deflate text: message %q", e.Message)
	}
	// 64 MiB of output in about 64 KiB: only MaxBody bytes of it are read.
	if e := post("gzip", "text/plain", gz(strings.Repeat("x", 64<<20))); e.Message != strings.Repeat("x", ingest.MaxBody) {
		t.Errorf("a gzip bomb: %d bytes of message, want %d", len(e.Message), ingest.MaxBody)
	}
	if ps := r.problems(b, 1); len(ps) != 0 {
		t.Fatalf("problems %+v after good compressed bodies", ps)
	}
	badCRC := gz("first part")
	badCRC[len(badCRC)-8] ^= 0xff // the trailer's CRC-32: the data reads, then fails its check
	for i, c := range []struct {
		encoding string
		body     []byte
		message  string
		detail   string
	}{
		{"gzip", []byte("not gzip at all"), "", "not gzip"},
		{"br", []byte("\x1b\x03brotli"), "", `"br" is not one Beet reads`},
		{"gzip", badCRC, "first part", "corrupt"},
	} {
		r.clock.Advance(11 * time.Minute) // past the note of the same problem
		if e := post(c.encoding, "text/plain", c.body); !strings.HasPrefix(e.Message, c.message) || c.message == "" && e.Message != "" || e.Value != nil {
			t.Errorf("%s %.20q: message %q, want %q first", c.encoding, c.body, e.Message, c.message)
		}
		ps := r.problems(b, i+1)
		if len(ps) != i+1 || ps[0].Kind != beet.ProblemBadBody || !strings.Contains(ps[0].Detail, c.detail) {
			t.Errorf("%s %.20q: problems %+v, want bad_body saying %q", c.encoding, c.body, ps, c.detail)
		}
	}
}
