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
	Range  string    `json:"range"`
	Step   int64     `json:"step"`
	Times  []int64   `json:"times"`
	Counts []int64   `json:"counts"`
	Band   *bandJSON `json:"band"`
	// Values is the average value sent in bodies per bucket (null where
	// none was); absent when no event in the range carried one.
	Values []*float64 `json:"values,omitempty"`
	// ValuesPartial says the values (and runs) were read from only the
	// newest chartValueEvents events of the range, which held more.
	ValuesPartial bool        `json:"values_partial,omitempty"`
	Flips         []flipPoint `json:"flips"`
	// Runs are the durations of the runs that ended in the range (job
	// signals: a start, then a success or failure); absent when none did.
	// They are read with the values, from the same newest events.
	Runs *runsJSON `json:"runs,omitempty"`
}

// runsJSON is one point per run, at its end, oldest first.
type runsJSON struct {
	Times   []int64   `json:"times"`   // Unix seconds of each run's end
	Seconds []float64 `json:"seconds"` // its duration
	Failed  []bool    `json:"failed"`  // it ended with a failure
	// LimitSeconds is the run-time limit (set, or learned in auto mode);
	// 0 for none. LimitLearned says it was learned.
	LimitSeconds float64 `json:"limit_seconds,omitempty"`
	LimitLearned bool    `json:"limit_learned,omitempty"`
	// Longest and Limit are the longest run and the limit in words
	// (detect.Duration), for the chart's text: "" for no limit.
	Longest string `json:"longest"`
	Limit   string `json:"limit,omitempty"`
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
	if out.Values, out.Runs, out.ValuesPartial, err = h.eventSeries(r, acc, id, bk); err != nil {
		return err
	}
	if out.Runs != nil {
		limit, learned := detect.RunLimit(b)
		out.Runs.LimitSeconds, out.Runs.LimitLearned = limit.Seconds(), learned && limit > 0
		if limit > 0 {
			out.Runs.Limit = detect.Duration(limit)
		}
	}
	flips, err := h.svc.Flips(ctx, acc, beet.FlipFilter{BeetID: id, Limit: beet.MaxPageLimit})
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

// chartValueEvents bounds the events read to chart values: the counts come
// from SQL whatever the volume, values from at most this many of the
// newest events in the range.
const chartValueEvents = 10 * beet.MaxPageLimit

// eventSeries reads the newest events of the range once for what SQL
// does not count: the average value sent with events per bucket, and the
// runs' durations. partial says the range held more events than were read.
func (h *Handler) eventSeries(r *http.Request, acc, id int64, bk beet.Buckets) (values []*float64, runs *runsJSON, partial bool, err error) {
	sums, ns := make([]float64, bk.N), make([]int, bk.N)
	from, until := bk.From, bk.End()
	any, read := false, 0
	var ends []*beet.Event // newest first
	for read < chartValueEvents {
		evs, err := h.svc.Events(r.Context(), acc, beet.EventFilter{BeetID: id, Since: &from, Until: &until, Limit: beet.MaxPageLimit})
		if err != nil {
			return nil, nil, false, err
		}
		for _, e := range evs {
			if e.Duration != nil {
				ends = append(ends, e)
			}
			if e.Value == nil {
				continue
			}
			i := int(e.ReceivedAt.Sub(bk.From) / bk.Step)
			if i >= 0 && i < bk.N {
				sums[i] += *e.Value
				ns[i]++
				any = true
			}
		}
		read += len(evs)
		if len(evs) < beet.MaxPageLimit {
			break
		}
		until = evs[len(evs)-1].ReceivedAt // newest first: go on before the oldest seen
	}
	partial = read >= chartValueEvents
	if len(ends) > 0 {
		runs = &runsJSON{}
		var longest time.Duration
		for i := len(ends) - 1; i >= 0; i-- {
			e := ends[i]
			runs.Times = append(runs.Times, e.ReceivedAt.Unix())
			runs.Seconds = append(runs.Seconds, e.Duration.Seconds())
			runs.Failed = append(runs.Failed, e.Kind.Normal() == beet.KindFail)
			longest = max(longest, *e.Duration)
		}
		runs.Longest = detect.Duration(longest)
	}
	if !any {
		return nil, runs, partial, nil
	}
	values = make([]*float64, bk.N)
	for i := range values {
		if ns[i] > 0 {
			m := sums[i] / float64(ns[i])
			values[i] = &m
		}
	}
	return values, runs, partial, nil
}
