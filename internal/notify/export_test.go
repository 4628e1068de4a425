package notify

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
)

// SetPagerDutyURL points s at a test receiver instead of PagerDuty.
func SetPagerDutyURL(s *Sender, u string) { s.pagerDutyURL = u }

// UseTestServer makes s trust srv's certificate (httptest issues it for
// example.com and 127.0.0.1) and dial srv for the fixed API hosts given
// (such as api.telegram.org:443), so services whose host cannot be set are
// tested on loopback too. Dialling still goes through the guarded dialer.
func UseTestServer(s *Sender, srv *httptest.Server, hostPorts ...string) {
	tr := s.client.Transport.(*http.Transport)
	pool := x509.NewCertPool()
	if c := srv.Certificate(); c != nil {
		pool.AddCert(c)
	}
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, ServerName: "example.com"}
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		for _, hp := range hostPorts {
			if addr == hp {
				addr = srv.Listener.Addr().String()
			}
		}
		return dial(ctx, network, addr)
	}
}
