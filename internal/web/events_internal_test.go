package web

import (
	"testing"

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
