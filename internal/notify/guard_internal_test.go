package notify

import (
	"net/netip"
	"testing"
)

// The guard refuses every address that is not the public internet,
// including IPv6 spellings of private IPv4 addresses, and lets public
// ones through, IPv6 spellings of public IPv4 ones included.
func TestPrivateAddr(t *testing.T) {
	for _, s := range []string{
		"127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
		"0.0.0.0", "0.1.2.3", "192.0.0.8", "192.0.2.1", "198.18.0.1", "198.19.255.254",
		"198.51.100.7", "203.0.113.9", "240.0.0.1", "255.255.255.255", "224.0.0.1",
		"::1", "::", "fc00::1", "fe80::1", "ff02::1", "2001:db8::1", "100::1", "64:ff9b:1::1",
		"::ffff:127.0.0.1", "::7f00:1", "::a01:203", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe",
		"2002:7f00:1::", "2002:a9fe:a9fe::1",
	} {
		if !privateAddr(netip.MustParseAddr(s)) {
			t.Errorf("%s passed the guard", s)
		}
	}
	for _, s := range []string{
		"93.184.215.14", "1.1.1.1", "8.8.8.8", "198.17.255.1", "198.20.0.1", "2606:4700::1111",
		"::ffff:93.184.215.14", "64:ff9b::5db8:d70e", "2002:5db8:d70e::1",
	} {
		if privateAddr(netip.MustParseAddr(s)) {
			t.Errorf("%s was refused", s)
		}
	}
}
