package notify

import (
	"errors"
	"net"
	"strings"
)

// publicNetError is err's text as an account may read it on a delivery:
// what went wrong stays, this host's own address (a socket's source) and
// the resolver's address go, since they describe the installation's
// network, not the customer's target. With hideRemote the dialled address
// goes too: for mail it is the operator's server.
func publicNetError(err error, hideRemote bool) string {
	text := err.Error()
	if inner, public, ok := netCause(err, hideRemote); ok {
		return strings.Replace(text, inner, public, 1)
	}
	return text
}

// netCause finds the network error in err's chain and returns its text
// (inner) and the same without the addresses publicNetError drops.
func netCause(err error, hideRemote bool) (inner, public string, ok bool) {
	var op *net.OpError
	if errors.As(err, &op) {
		c := *op
		c.Source = nil
		if hideRemote {
			c.Addr = nil
		}
		c.Err = withoutResolver(c.Err)
		return op.Error(), c.Error(), true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.Error(), withoutResolver(dns).Error(), true
	}
	return "", "", false
}

// withoutResolver drops the resolver's address from a lookup's error.
func withoutResolver(err error) error {
	if dns, ok := err.(*net.DNSError); ok {
		c := *dns
		c.Server = ""
		return &c
	}
	return err
}
