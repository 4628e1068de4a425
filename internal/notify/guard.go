package notify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"github.com/beethq/beet"
)

// errPrivate is a refusal of a private target; retrying cannot fix it.
var errPrivate = errors.New("the target resolves to a private, loopback or link-local address (BEET_ALLOW_PRIVATE_TARGETS=true allows it)")

// privateAddr reports whether ip is one a public alerting service must not
// be made to call: loopback, private (RFC 1918, fc00::/7), link-local
// (cloud metadata lives there), unspecified, or carrier-grade NAT.
func privateAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsUnspecified() || ip.IsMulticast() || netip.MustParsePrefix("100.64.0.0/10").Contains(ip)
}

// CheckTarget is the creation-time check of a channel's URL: a literal
// private IP, or a host name that resolves to one, is refused. A name that
// does not resolve now is accepted: the send-time check in the dialer is
// the one that holds, against the address actually dialled. A service URL
// (its scheme is a service kind: gotify://...) is first checked with the
// library that sends it, and its guard is on the host a send dials.
func CheckTarget(ctx context.Context, raw string, allowPrivate bool) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil // the caller's URL validation reports it
	}
	host := u.Hostname()
	if kind := beet.ChannelKind(u.Scheme); kind.ServiceURL() {
		su, err := parseServiceURL(kind, raw)
		if err != nil {
			return err
		}
		host = su.host
	}
	if allowPrivate {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if privateAddr(ip) {
			return beet.FieldError("config.url", "%s", errPrivate.Error())
		}
		return nil
	}
	if host == "localhost" {
		return beet.FieldError("config.url", "%s", errPrivate.Error())
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, ip := range ips {
		if privateAddr(ip) {
			return beet.FieldError("config.url", "%s", errPrivate.Error())
		}
	}
	return nil
}

// guardedDialer refuses, at connect time, any address the guard forbids.
// Control sees the resolved address, so a name that resolves to a public
// address at creation and a private one later (DNS rebinding) is still
// refused.
func guardedDialer(allowPrivate bool) *net.Dialer {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("dial %s: %w", address, errPrivate)
			}
			if privateAddr(ap.Addr()) {
				return errPrivate
			}
			return nil
		}
	}
	return d
}

// newHTTPClient is the client every HTTP sender uses: guarded dialing, no
// proxy from the environment (a proxy would dial for us, unguarded),
// bounded time, and at most 3 redirects (each dialled through the guard).
func newHTTPClient(allowPrivate bool) *http.Client {
	tr := &http.Transport{
		DialContext:           guardedDialer(allowPrivate).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          20,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 15 * time.Second,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   20 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("stopped after 3 redirects")
			}
			return nil
		},
	}
}
