package beet

import "time"

// FlipJSON is a flip as Beet writes it out: in the API's list of a beet's
// flips and as the "flip" of a webhook (CONTRACT §2). One type, so the two
// cannot drift apart.
type FlipJSON struct {
	At       time.Time `json:"at"`
	From     Status    `json:"from"`
	To       Status    `json:"to"`
	Kind     FlipKind  `json:"kind"`
	Reason   string    `json:"reason"`
	Observed *float64  `json:"observed,omitempty"`
	Expected *float64  `json:"expected,omitempty"`
}

// JSON returns the flip in the shape Beet writes it out.
func (f *Flip) JSON() FlipJSON {
	return FlipJSON{At: f.At, From: f.From, To: f.To, Kind: f.Kind, Reason: f.Reason, Observed: f.Observed, Expected: f.Expected}
}
