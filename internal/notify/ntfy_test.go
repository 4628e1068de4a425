package notify_test

import (
	"strings"
	"testing"

	"github.com/beethq/beet"
)

// TestNtfyAccessToken: a protected ntfy topic takes its access token in the
// URL's auth parameter (ntfy's documented form); it reaches ntfy as given,
// and a refusal's error does not show it.
func TestNtfyAccessToken(t *testing.T) {
	r := newRig(t, "sqlite")
	rc := newReceiver(t, 403, 200)
	const auth = "QmVhcmVyIHRrX0FnUWRxN21WQm9GRDM3emVRdjRVbkpRcGR5Q0JU" // base64 of "Bearer tk_AgQdq7mVBoFD37zeQv4UnJQpdyCBT"
	ch := r.channel(beet.ChannelNtfy, beet.ChannelConfig{URL: rc.URL + "/backups?auth=" + auth})
	r.down()
	ds := r.drain(r.worker(), ch)
	if got := rc.requests(); len(got) != 1 || got[0].URI != "/backups?auth="+auth {
		t.Fatalf("ntfy got %+v; want one request to /backups?auth=…", got)
	}
	if d := ds[0]; d.Status != beet.DeliveryFailed || strings.Contains(d.Error, auth) {
		t.Errorf("delivery %+v; want failed on the 403, without the token in its error", d)
	}
}
