package service

import "testing"

// TestTypoDistance: a changed, lost, added or swapped character is one
// edit; anything past the limit is limit+1, as are two random tokens.
func TestTypoDistance(t *testing.T) {
	live := "bt_AbCdEfGhIjKlMnOpQrStUv123456"
	for _, c := range []struct {
		sent string
		want int
	}{
		{live, 0},
		{"bt_AbCdEfGhIjKlMnOpQrStUv123457", 1},  // changed
		{"bt_AbCdEfGhIjKlMnOpQrStUv12345", 1},   // lost
		{"bt_AbCdEfGhIjKlMnOpQrStUv1234566", 1}, // added
		{"bt_bACdEfGhIjKlMnOpQrStUv123456", 1},  // swapped
		{"bt_AbCdEfGhIjKlMnOpQrStUv1234", 2},
		{"xt_AbCdEfGhIjKlMnOpQrStUv1234", 3},
		{"bt_ZyXwVuTsRqPoNmLkJiHgFeDc98765", 3},
		{"bt_", 3},
	} {
		if got := typoDistance(c.sent, live, 2); got != c.want {
			t.Errorf("typoDistance(%q) = %d, want %d", c.sent, got, c.want)
		}
	}
}
