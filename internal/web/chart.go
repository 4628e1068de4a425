package web

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
)

// chartRanges are the chart's spans and their bucket widths: about a
// hundred bars each, so the chart stays readable on a phone.
var chartRanges = map[string]struct {
	span, step time.Duration
}{
	"24h": {24 * time.Hour, 15 * time.Minute},
	"7d":  {7 * 24 * time.Hour, time.Hour},
	"30d": {30 * 24 * time.Hour, 6 * time.Hour},
}

// chartJSON is what the beet page's chart draws. Times are Unix seconds
// (uPlot's unit) of each bucket's start.
type chartJSON struct {
	Range  string      `json:"range"`
	Step   int64       `json:"step"`
	Times  []int64     `json:"times"`
	Counts []int64     `json:"counts"`
	Band   *bandJSON   `json:"band"`
	Flips  []flipPoint `json:"flips"`
}

type bandJSON struct {
	Lo  []float64 `json:"lo"`
	Mid []float64 `json:"mid"`
	Hi  []float64 `json:"hi"`
}

type flipPoint struct {
	At     int64  `json:"at"`
	To     string `json:"to"`
	Reason string `json:"reason"`
}

func (h *Handler) chartData(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	name := r.URL.Query().Get("range")
	if name == "" {
		name = "24h"
	}
	rg, ok := chartRanges[name]
	if !ok {
		return beet.FieldError("range", "must be 24h, 7d or 30d")
	}
	ctx, acc := r.Context(), p.session.AccountID
	b, err := h.svc.Beet(ctx, acc, id)
	if err != nil {
		return err
	}
	now := h.svc.Now()
	n := int(rg.span / rg.step)
	// The last bucket holds now; buckets start on whole steps (UTC).
	from := now.Truncate(rg.step).Add(-time.Duration(n-1) * rg.step)
	bk := beet.Buckets{From: from, Step: rg.step, N: n}
	counts, err := h.svc.BeetEventCounts(ctx, acc, id, bk)
	if err != nil {
		return err
	}
	out := chartJSON{Range: name, Step: int64(rg.step / time.Second), Counts: counts, Times: make([]int64, n), Flips: []flipPoint{}}
	for i := range n {
		out.Times[i] = from.Add(time.Duration(i) * rg.step).Unix()
	}
	if lo, mid, hi, ok := detect.ExpectedBand(b, from, rg.step, n); ok {
		out.Band = &bandJSON{Lo: lo, Mid: mid, Hi: hi}
	}
	flips, err := h.svc.Flips(ctx, acc, id, beet.MaxPageLimit)
	if err != nil {
		return err
	}
	for _, f := range flips {
		if f.At.Before(from) {
			break // newest first
		}
		out.Flips = append(out.Flips, flipPoint{At: f.At.Unix(), To: string(f.To), Reason: f.Reason})
	}
	body, err := json.Marshal(out)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(body)
	return nil
}
