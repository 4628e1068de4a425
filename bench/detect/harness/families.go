package harness

import (
	"math/rand/v2"
	"strings"
	"time"
)

// Incident sets. Rate families get outages of three lengths (1 h is below
// what can be detected honestly at 0.5/h; 24 h is detectable everywhere), a
// long drop and a short surge; schedule families get missed runs.
var (
	rateIncidents = []IncidentSpec{
		{Name: "outage 1h", Kind: IncidentOutage, Duration: time.Hour},
		{Name: "outage 6h", Kind: IncidentOutage, Duration: 6 * time.Hour},
		{Name: "outage 24h", Kind: IncidentOutage, Duration: 24 * time.Hour},
		{Name: "drop to 30% 12h", Kind: IncidentDrop, Duration: 12 * time.Hour, Factor: 0.3},
		{Name: "surge x3-5 3h", Kind: IncidentSurge, Duration: 3 * time.Hour, Factor: 3, FactorMax: 5},
	}
	cronIncidents = []IncidentSpec{
		{Name: "missed 1 run", Kind: IncidentMissedRun, Runs: 1},
		{Name: "missed 3 runs", Kind: IncidentMissedRun, Runs: 3},
	}
	// A job also started by hand, or a retry loop: every run comes, with
	// more events than usual.
	cronEpisodes = []IncidentSpec{
		{Name: "10 events a run (12 s apart), 6 runs", Kind: IncidentExtraPings, Runs: 6, Extra: 9, ExtraGap: 12 * time.Second},
		{Name: "a run by hand between runs, 6 times", Kind: IncidentExtraPings, Runs: 6, Extra: 1},
		{Name: "a retry loop: an event every 12 s for 3 h", Kind: IncidentExtraPings, Runs: 1, Extra: 900, ExtraGap: 12 * time.Second},
	}
	// Rate-family beets live in four zones whose DST changes fall on
	// different dates, the southern one in the opposite season.
	rateZones = []string{"America/New_York", "Europe/Berlin", "Europe/Riga", "Australia/Sydney"}
)

// Families returns the synthetic families of DETECTION.md, in report order.
func Families() []*Family {
	poisson := func(perHour float64) func(*rand.Rand) model {
		return func(r *rand.Rand) model { return newSeasonal(r, perHour) }
	}
	nb := func(perHour float64) func(*rand.Rand) model {
		return func(r *rand.Rand) model {
			m := newSeasonal(r, perHour)
			m.nbShape = 1 + 9*r.Float64() // r in [1, 10]: hourly variance 1+m/r, 6-51× Poisson at 50/h
			m.dayShape = 30               // day-to-day level: CV ≈ 18%
			return m
		}
	}
	cronEvery := func(every, jitter time.Duration) func(*rand.Rand) model {
		return func(r *rand.Rand) model {
			off := time.Duration(r.Int64N(int64(every/time.Minute))) * time.Minute
			return &cronModel{every: every, offset: off, jitterMax: jitter}
		}
	}
	return []*Family{
		{Name: "poisson-0.5", Description: "seasonal Poisson, 0.5 events/h on average (hour-of-day × day-of-week profile, local time)",
			Zones: rateZones, Incidents: rateIncidents, newModel: poisson(0.5)},
		{Name: "poisson-5", Description: "seasonal Poisson, 5 events/h", Zones: rateZones, Incidents: rateIncidents, newModel: poisson(5)},
		{Name: "poisson-50", Description: "seasonal Poisson, 50 events/h", Zones: rateZones, Incidents: rateIncidents, newModel: poisson(50)},
		{Name: "negbin-5", Description: "seasonal negative binomial, 5 events/h (hourly Gamma mixing, size r in [1,10], plus a daily level)",
			Zones: rateZones, Incidents: rateIncidents, newModel: nb(5)},
		{Name: "negbin-50", Description: "seasonal negative binomial, 50 events/h", Zones: rateZones, Incidents: rateIncidents, newModel: nb(50)},
		{Name: "webhooks", Description: "bursty webhooks: seasonal Poisson bursts at 1.5/h, 1+geometric events per burst (mean 5), ~5 s apart",
			Zones: rateZones, Incidents: rateIncidents, newModel: func(r *rand.Rand) model {
				m := newSeasonal(r, 1.5)
				m.cluster, m.meanSize, m.burstGap = true, 5, 5
				return m
			}},
		{Name: "cron-daily", Description: "daily job at 02:00 Europe/Riga, each run ±2 min",
			Zones: []string{"Europe/Riga"}, Incidents: cronIncidents, Episodes: cronEpisodes, newModel: func(*rand.Rand) model {
				return &cronModel{dailyHour: 2, jitterMin: -2 * time.Minute, jitterMax: 2 * time.Minute}
			}},
		{Name: "cron-hourly", Description: "hourly job at a fixed minute, each run 0-60 s late",
			Zones: []string{"Europe/Riga"}, Incidents: cronIncidents, Episodes: cronEpisodes, newModel: cronEvery(time.Hour, time.Minute)},
		{Name: "cron-5min", Description: "job every 5 min, each run 0-10 s late",
			Zones: []string{"Europe/Riga"}, Incidents: cronIncidents, Episodes: cronEpisodes, newModel: cronEvery(5*time.Minute, 10*time.Second)},
	}
}

// FilterFamilies keeps the families named in the comma-separated list
// (all when the list is empty). Unknown names are returned so the caller
// can refuse them.
func FilterFamilies(fs []*Family, list string) (kept []*Family, unknown []string) {
	if strings.TrimSpace(list) == "" {
		return fs, nil
	}
	want := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	for _, f := range fs {
		if want[f.Name] {
			kept = append(kept, f)
			delete(want, f.Name)
		}
	}
	for n := range want {
		unknown = append(unknown, n)
	}
	return kept, unknown
}
