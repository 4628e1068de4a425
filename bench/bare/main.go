// Command bare is the baseline of the ingestion benchmark: a plain net/http
// server that answers every request with the same 43-byte GIF and headers
// as Beet's ingestion endpoint, and does nothing else.
package main

import (
	"flag"
	"log"
	"net"
	"net/http"
	"os"
)

var gif = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff\x21\xf9\x04\x01\x00\x00\x00\x00\x2c\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02\x44\x01\x00\x3b")

func main() {
	addr := flag.String("listen", "127.0.0.1:0", "address")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	os.Stdout.WriteString("http://" + ln.Addr().String() + "\n")
	log.Fatal(http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
