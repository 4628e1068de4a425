package web

import (
	"testing"
	"time"

	"github.com/beethq/beet"
)

// TestEveryDeliveryEventHasWords: the delivery log never shows a raw event
// name such as "beet.settled".
func TestEveryDeliveryEventHasWords(t *testing.T) {
	for _, e := range []string{beet.EventTest, beet.EventDown, beet.EventAnomalous, beet.EventUp, beet.EventPaused, beet.EventSettled} {
		if w := eventWords(e); w == e || w == "" {
			t.Errorf("event %q is shown as %q", e, w)
		}
	}
}

// TestDeliveryLatencyInWords: a delivery's latency is written as every
// other length of time on the dashboard (detect.Duration).
func TestDeliveryLatencyInWords(t *testing.T) {
	at := time.Now()
	for d, want := range map[time.Duration]string{
		1500 * time.Microsecond: "1 ms", 350 * time.Millisecond: "350 ms", 1234 * time.Millisecond: "1.2 s", 12 * time.Second: "12 s",
	} {
		if got := deliveryOf(&beet.Delivery{LastAt: &at, Latency: d}).Latency; got != want {
			t.Errorf("latency %v: %q, want %q", d, got, want)
		}
	}
}

// TestRunResultInWords: the event log says a run's result in words.
func TestRunResultInWords(t *testing.T) {
	code := func(c int) *int { return &c }
	dur := func(d time.Duration) *time.Duration { return &d }
	for _, c := range []struct {
		e    beet.Event
		want string
	}{
		{beet.Event{}, ""},
		{beet.Event{Kind: beet.KindPing, ExitCode: code(0), Duration: dur(2 * time.Second)}, "succeeded in 2 s"},
		{beet.Event{Kind: beet.KindPing, Duration: dur(55 * time.Millisecond)}, "succeeded in 55 ms"},
		{beet.Event{Kind: beet.KindPing, Duration: dur(1250 * time.Millisecond)}, "succeeded in 1.2 s"},
		{beet.Event{Kind: beet.KindFail, ExitCode: code(3), Duration: dur(41 * time.Second)}, "failed with exit code 3 after 41 s"},
		{beet.Event{Kind: beet.KindFail, Duration: dur(3 * time.Minute)}, "failed after 3 min"},
		{beet.Event{Kind: beet.KindFail, ExitCode: code(2)}, "failed with exit code 2"},
		{beet.Event{Kind: beet.KindPing, ExitCode: code(0)}, "succeeded"},
		{beet.Event{Kind: beet.KindStart}, "started"},
		{beet.Event{Kind: beet.KindLog}, "log"},
	} {
		if got := signalWords(&c.e); got != c.want {
			t.Errorf("%+v: %q, want %q", c.e, got, c.want)
		}
	}
}
