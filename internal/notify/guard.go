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
// (cloud metadata lives there), unspecified, multicast, or one of IANA's
// special-purpose blocks that are not the public internet (carrier-grade
// NAT, benchmarking, documentation, reserved). An IPv6 address that carries
// an IPv4 one (NAT64, 6to4, IPv4-compatible) is judged by the IPv4 address,
// since a NAT64 gateway or the kernel would deliver it there.
func privateAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if v4, ok := embeddedIPv4(ip); ok {
		return privateAddr(v4)
	}
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsUnspecified() || ip.IsMulticast() {
		return true
	}
	for _, p := range specialPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// specialPrefixes are the blocks of IANA's special-purpose registries that
// net/netip's predicates do not cover and that no public service lives in.
var specialPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking, often routed inside labs
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
}

// nat64, sixToFour and v4Compatible are the IPv6 blocks whose addresses
// carry an IPv4 address that a gateway or the kernel delivers to.
var (
	nat64        = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour    = netip.MustParsePrefix("2002::/16")
	v4Compatible = netip.MustParsePrefix("::/96")
)

// embeddedIPv4 returns the IPv4 address an IPv6 address carries, if any.
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	if !ip.Is6() {
		return netip.Addr{}, false
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	case v4Compatible.Contains(ip) && !ip.IsLoopback() && !ip.IsUnspecified():
		return netip.AddrFrom4([4]byte(b[12:16])), true
	}
	return netip.Addr{}, false
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
