package detect

import (
	"time"

	"github.com/beethq/beet"
)

// Params are auto mode's tunable parameters. The live service and `beet
// backtest` run DefaultParams (through ApplyEvents and ApplyDeadlines);
// the judge (internal/detectjudge) runs other values through the same code
// to show how much a score owes to them (NAB leave-one-file-out).
type Params struct {
	// The drop and surge CUSUMs test normal against these rate ratios and
	// alarm when the log-likelihood ratio (nats) reaches their alarm
	// levels; set on the judge's tuning seeds for at most 1 false alarm
	// per 1000 beet-days on every synthetic family (docs/DETECTION.md).
	// Beets with no daily shape follow no clock change (notRuledOut), so
	// no lower reading holds their drops back after one: DropAlarm 13
	// keeps the tuning seed's rate families at the false alarms that
	// margin held them to (26; 12.5: 29).
	DropRatio, SurgeRatio float64
	DropAlarm, SurgeAlarm float64
	// SlowRate, DropSlowCut and SurgeSlowCut lower the drop and surge
	// alarm levels of slow beets (slowCut, window.go): by ln(SlowRate/µ),
	// µ the units (unit) an average hour expects, at most DropSlowCut and
	// SurgeSlowCut, so that a slow beet's false alarms stay about as rare
	// a day as a busier one's. 0: no cut.
	SlowRate, DropSlowCut, SurgeSlowCut float64
	// SurgeSmoothCut lowers the surge alarm level of a smooth beet, one
	// whose hourly counts are near Poisson (smooth, window.go): its surge
	// evidence is what the likelihood of its windows says, while the
	// level's margin is for the day's level and the burst sizes that an
	// overdispersed or bursty beet's hours share. On the tuning seed 1.5
	// took the smooth families' surges from 1.30 to 1.25 times the
	// yardstick's time for one false surge more in 46,183 beet-days; 3
	// cost two.
	SurgeSmoothCut float64
	// SilenceFalseAlarms is the silence false alarms a day the silence
	// threshold aims at. It sits below the product goal (0.001 for all
	// kinds together) because real rates drift from what the model learned.
	SilenceFalseAlarms float64
	// SilenceSizeShare is the share of the learned negative-binomial size
	// (predSize) with which the silence deadline of an overdispersed beet
	// reads its hours (silenceNeed); 0 reads them as D times Poisson
	// instead. Less than 1 would allow for the size's own uncertainty and
	// the day's level, which the hours of a silence share: on the tuning
	// seed 0.75 cost the negbin families 0.1 of the oracle's time (1.0 to
	// 1.14 at 50 an hour) for one false silence fewer in 120 clean beets.
	SilenceSizeShare float64
	// MinLearnRate is the smallest weight a bucket's new hour gets (an
	// EWMA of about 1/MinLearnRate days).
	MinLearnRate float64
	// DSTFollow is how long after a clock change in a candidate zone (and
	// not in the beet's own) the rate model allows each hour's rate to be
	// its neighbour's in the direction of the change: traffic that follows
	// that zone's clock has moved by an hour, and the rates learn the move
	// in about this long (a weight of 0.08 a day leaves a fifth of the old
	// level after three weeks).
	DSTFollow time.Duration
	// ShiftRuleOut is the evidence (nats, log-likelihood of the hours
	// since the change under "moved by the hour" against "did not move")
	// below which a clock change is taken not to concern this beet: from
	// then on its rates are read as learned again (zone.go), until the
	// evidence climbs back. A beet whose traffic does move sees its
	// evidence fall that low with probability at most e^−ShiftRuleOut
	// (Wald); a beet whose traffic does not move is read against the
	// lowest and highest of two hours until its evidence rules the move
	// out, and at 7 nats its drops and surges in the three weeks after
	// any candidate zone's change went unflagged (153 of the 191 the
	// judge's CUSUM finds on the tuning seed, 161 at 2, with the same
	// false alarms).
	ShiftRuleOut float64
	// ShiftFollowed is the evidence (as ShiftRuleOut) from which the
	// beet's traffic is said to follow the candidate zone's clock
	// (SuggestedZone): a zone is named to the user only when it is sure.
	ShiftFollowed float64
	// DispWeight is the smallest weight an hour gets in the estimate of
	// the negative-binomial size of hourly counts that the drop and surge
	// CUSUMs use (EWMAs of about 1/DispWeight hours).
	DispWeight float64
	// WarmSamples is how often an hour bucket must have been seen (days
	// since the first event, weekdays and weekends apart) before the drop
	// and surge tests take its hours as evidence.
	WarmSamples float64
	// SurgeDecay is what each closed hour leaves of the surge CUSUM's value
	// before it (1: all of it). A surge is hours far above normal; a busy
	// day is many hours a little above it, which on overdispersed traffic
	// (hours that share the day's level) would otherwise add up to one.
	SurgeDecay float64
	// SizeCap bounds what one hour can teach the negative-binomial size:
	// its share of 1/r at most SizeCap × (1/r + 1/sizeCapFloor), and while
	// the surge CUSUM is building, at the settled pace of DispWeight even in
	// the first days (surgesize.go). A surge's first hours must not make the
	// next ones look ordinary (issue 12).
	SizeCap float64
	// SurgeYoung is how often an hour bucket must have been seen for its
	// surge evidence to count in full; before, it counts seen/SurgeYoung:
	// a rate learned from a few hours of overdispersed traffic is no firm
	// baseline for one wild hour.
	SurgeYoung float64
	// LevelCarry is the share of a finished day's level (daylevel.go) that
	// a beet whose hours are near Poisson carries into all its rates
	// (carryLevel): each rate learns from its own hour alone and lags a
	// growing or shrinking beet's traffic. On the tuning seeds 0.2 and 0.3
	// found the same (trend-20's drops and surges 69 → 72 of the CUSUM's 72
	// at 1.22 times its time, was 1.84; 4 fewer false alarms in 12 rate
	// families).
	LevelCarry float64
	// DayLowZ is how many of its spreads below a usual day's level today's
	// must lie to be a slow day (daylow.go); 0: never.
	DayLowZ float64
}

// DefaultParams returns the parameters the live service runs.
func DefaultParams() Params {
	return Params{
		DropRatio: 0.2, SurgeRatio: 3, DropAlarm: 13, SurgeAlarm: 13,
		SlowRate: 10, DropSlowCut: 3, SurgeSlowCut: 3, SurgeSmoothCut: 1.5,
		SilenceFalseAlarms: 0.0002,
		SilenceSizeShare:   1,
		MinLearnRate:       0.08,
		DSTFollow:          21 * 24 * time.Hour,
		ShiftRuleOut:       2,
		ShiftFollowed:      7,
		DispWeight:         0.01,
		WarmSamples:        3,
		SurgeDecay:         0.9,
		SizeCap:            15,
		SurgeYoung:         4,
		LevelCarry:         0.2,
		DayLowZ:            4.5,
	}
}

var defaultParams = DefaultParams()

// ApplyEvents is the package's ApplyEvents run with p.
func (p Params) ApplyEvents(b *beet.Beet, sp beet.EventSpan) ([]beet.Flip, error) {
	return applyEvents(&p, b, sp)
}

// ApplyDeadlines is the package's ApplyDeadlines run with p.
func (p Params) ApplyDeadlines(b *beet.Beet, t time.Time) ([]beet.Flip, error) {
	return applyDeadlines(&p, b, t, -1)
}
