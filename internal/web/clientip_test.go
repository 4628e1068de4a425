package web

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestClientIP(t *testing.T) {
	h := &Handler{proxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}}
	for _, tc := range []struct {
		remote, xff, want string
	}{
		{"198.51.100.7:5000", "", "198.51.100.7"},
		// Not from a trusted proxy: the header is ignored.
		{"198.51.100.7:5000", "203.0.113.1", "198.51.100.7"},
		// From the proxy: the client it names.
		{"10.1.2.3:5000", "203.0.113.1", "203.0.113.1"},
		// A client that forges hops gets the address the proxy saw.
		{"10.1.2.3:5000", "1.1.1.1, 203.0.113.1", "203.0.113.1"},
		// Two proxies in a row.
		{"10.1.2.3:5000", "203.0.113.1, 10.9.9.9", "203.0.113.1"},
		{"[::1]:5000", "2001:db8::5", "2001:db8::5"},
		// Only proxies, or a garbled hop: the last address we could trust.
		{"10.1.2.3:5000", "10.0.0.1", "10.0.0.1"},
		{"10.1.2.3:5000", "203.0.113.1, garbage", "10.1.2.3"},
	} {
		r := httptest.NewRequest("POST", "/login", nil)
		r.RemoteAddr = tc.remote
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		if got := h.clientIP(r); got != tc.want {
			t.Errorf("RemoteAddr %s, X-Forwarded-For %q: client %s, want %s", tc.remote, tc.xff, got, tc.want)
		}
	}
}
