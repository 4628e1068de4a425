package detectjudge

import (
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// Incident sets. Rate families get outages of three lengths (1 h is often
// not detectable in principle on slow streams; 4 days is detectable on
// every stream with traffic), a long partial drop and a short surge;
// schedule families get missed, late and (with start and end pings) stuck
// runs.
var (
	rateIncidents = []IncidentSpec{
		{Name: "outage 1h", Kind: IncidentOutage, Duration: time.Hour},
		{Name: "outage 6h", Kind: IncidentOutage, Duration: 6 * time.Hour},
		{Name: "outage 4d", Kind: IncidentOutage, Duration: 96 * time.Hour},
		{Name: "drop to 30% 12h", Kind: IncidentDrop, Duration: 12 * time.Hour, Factor: 0.3},
		{Name: "surge x3-5 3h", Kind: IncidentSurge, Duration: 3 * time.Hour, Factor: 3, FactorMax: 5},
	}
	// A lasting move of a busy beet's level: smaller than a drop to 30%
	// or a surge of 3×, but for a day or more.
	levelShifts = []IncidentSpec{
		{Name: "down to 50% 4d", Kind: IncidentDrop, Duration: 96 * time.Hour, Factor: 0.5},
		{Name: "down to 60% 1d", Kind: IncidentDrop, Duration: 24 * time.Hour, Factor: 0.6},
		{Name: "up 1.5x 1d", Kind: IncidentSurge, Duration: 24 * time.Hour, Factor: 1.5, FactorMax: 1.5},
	}
	scheduleIncidents = []IncidentSpec{
		{Name: "missed 1 run", Kind: IncidentMissedRun, Runs: 1},
		{Name: "stopped 4d", Kind: IncidentMissedRun, Duration: 96 * time.Hour},
		{Name: "late run", Kind: IncidentLateRun},
	}
	startEndIncidents = append(append([]IncidentSpec(nil), scheduleIncidents...),
		IncidentSpec{Name: "stuck 3 runs", Kind: IncidentStuck, Runs: 3})
	// A job that stops in its first week, while a learning detector is
	// still learning it: on its 2nd day, or its 4th or 5th, for 6 hours
	// (jobs that run at least hourly) or 3 days (daily jobs), and a daily
	// job stopped on its 9th day.
	firstWeekShort = []IncidentSpec{
		{Name: "stopped 6h on day 2", Kind: IncidentMissedRun, Duration: 6 * time.Hour, Day: 1, DayMax: 2},
		{Name: "stopped 6h on day 4-5", Kind: IncidentMissedRun, Duration: 6 * time.Hour, Day: 3, DayMax: 5},
	}
	// A job that stops on the day it was set up, after the runs a schedule
	// incident waits for (the oracle's minRunsBefore).
	firstDay       = IncidentSpec{Name: "stopped 6h on day 1", Kind: IncidentMissedRun, Duration: 6 * time.Hour, Day: 0, DayMax: 1}
	firstWeekDaily = []IncidentSpec{
		{Name: "stopped 3d on day 4-5", Kind: IncidentMissedRun, Duration: 72 * time.Hour, Day: 3, DayMax: 5},
		{Name: "stopped 3d on day 9", Kind: IncidentMissedRun, Duration: 72 * time.Hour, Day: 8, DayMax: 9},
	}
	// A job also started by hand, or a retry loop: every run comes, with
	// more events than usual.
	scheduleEpisodes = []IncidentSpec{
		{Name: "10 events a run (12 s apart), 6 runs", Kind: IncidentExtra, Runs: 6, Extra: 9, ExtraGap: 12 * time.Second},
		{Name: "a run by hand between runs, 6 times", Kind: IncidentExtra, Runs: 6, Extra: 1},
		{Name: "a retry loop: an event every 12 s for 3 h", Kind: IncidentExtra, Runs: 1, Extra: 900, ExtraGap: 12 * time.Second},
	}
	// Beets live in zones whose DST changes fall on different dates, the
	// southern one in the opposite season.
	zones  = []string{"America/New_York", "Europe/Berlin", "Europe/Riga", "Australia/Sydney"}
	berlin = []string{"Europe/Berlin"}
	utc    = []string{"UTC"}
)

// Families returns the synthetic families, in report order.
func Families() []*Family {
	seasonal := func(perHour float64) func(*rand.Rand) model {
		return func(r *rand.Rand) model { return newSeasonal(r, perHour) }
	}
	negbin := func(perHour float64) func(*rand.Rand) model {
		return func(r *rand.Rand) model {
			m := newSeasonal(r, perHour)
			m.nbShape = 1 + 9*r.Float64() // r in [1, 10]: hourly variance 1+m/r, 6-51× Poisson at 50/h
			m.dayShape = 30               // day-to-day level: CV ≈ 18%
			return m
		}
	}
	bursty := func(perHour float64) func(*rand.Rand) model {
		return func(r *rand.Rand) model {
			m := newSeasonal(r, perHour)
			m.minSize, m.maxSize, m.burstGap = 1, 20, 5
			return m
		}
	}
	job := func(startEnd bool, draw func(r *rand.Rand) (calendar, time.Duration)) func(*rand.Rand) model {
		return func(r *rand.Rand) model {
			cal, period := draw(r)
			return newSchedule(r, cal, period, startEnd)
		}
	}
	minuteOfDay := func(r *rand.Rand, fromH, toH int) int { return fromH*60 + r.IntN((toH-fromH)*60) }
	every := func(d time.Duration) func(r *rand.Rand) (calendar, time.Duration) {
		return func(r *rand.Rand) (calendar, time.Duration) {
			off := time.Duration(r.Int64N(int64(d/time.Minute))) * time.Minute
			return everyCal{every: d, offset: off}, d
		}
	}
	daily := func(r *rand.Rand) (calendar, time.Duration) { return everyDay(minuteOfDay(r, 0, 24)), 24 * time.Hour }
	// delayedDaily: a daily job each of whose runs starts at random up to
	// 1-8 h after its time (a systemd timer's RandomizedDelaySec).
	delayedDaily := func(startEnd bool) func(*rand.Rand) model {
		return func(r *rand.Rand) model {
			cal, period := daily(r)
			m := newSchedule(r, cal, period, startEnd)
			m.delay = time.Duration(60+r.IntN(7*60+1)) * time.Minute
			return m
		}
	}
	// curlJob: a job whose ping is the cron line's first command (`curl …
	// && backup.sh`) or a timer's start: it comes within 1-5 s of its time
	// (cron's own jitter and the request), 1 run in 100 up to 4× that.
	curlJob := func(draw func(r *rand.Rand) (calendar, time.Duration)) func(*rand.Rand) model {
		return func(r *rand.Rand) model {
			m := job(false, draw)(r).(*scheduleModel)
			m.dur0, m.spread = 0, time.Duration(1+r.IntN(5))*time.Second
			return m
		}
	}
	// loopJob: a job run in a loop, pinging as each run ends and sleeping
	// sleep after it (loopCal): its runs last least (drawn from leastLo to
	// leastHi) plus up to a spread drawn from spreadLo to spreadHi.
	loopJob := func(sleep, leastLo, leastHi, spreadLo, spreadHi time.Duration) func(*rand.Rand) model {
		return func(r *rand.Rand) model {
			least := leastLo + time.Duration(r.Int64N(int64(leastHi-leastLo)+1)).Round(time.Second)
			spread := spreadLo + time.Duration(r.Int64N(int64(spreadHi-spreadLo)+1)).Round(time.Second)
			loop := newLoop(r, sleep, least, spread)
			m := newSchedule(r, loop, sleep+least+spread/2, false)
			m.dur0, m.spread, m.lateP = 0, time.Second, 0 // the loop's slots are its pings
			return m
		}
	}
	// skipping: a job that pings only when a run had work, or only when it
	// succeeded: runs are missing at random, 0.3-5% of them.
	skipping := func(draw func(r *rand.Rand) (calendar, time.Duration)) func(*rand.Rand) model {
		return func(r *rand.Rand) model {
			m := job(false, draw)(r).(*scheduleModel)
			m.skipP = 0.003 * math.Pow(0.05/0.003, r.Float64())
			return m
		}
	}
	// batchJob: a job that sends one event per item it processed.
	batchJob := func(draw func(r *rand.Rand) (calendar, time.Duration), least, most int, span time.Duration) func(*rand.Rand) model {
		return func(r *rand.Rand) model {
			m := job(false, draw)(r).(*scheduleModel)
			m.batchMin, m.batchMax, m.batchSpan = least, most, span
			return m
		}
	}
	// flaky: a job whose host or network goes down now and then: two
	// outages of 20 min to 3 h, on days 8-11 and 13-16, before its
	// incidents (an earlier outage must not blunt the watch on later ones).
	flaky := func(inner func(*rand.Rand) model) func(*rand.Rand) model {
		return func(r *rand.Rand) model {
			m := inner(r).(*scheduleModel)
			for _, day := range []int{8, 13} {
				m.outages = append(m.outages, outage{
					after:  days(float64(day) + 3*r.Float64()).Truncate(time.Second),
					length: time.Duration(20+r.IntN(160)) * time.Minute,
				})
			}
			return m
		}
	}
	// growing: a nightly backup whose runs take longer as its data grows.
	growing := func(startEnd bool) func(*rand.Rand) model {
		return func(r *rand.Rand) model {
			m := newSchedule(r, everyDay(minuteOfDay(r, 0, 5)), 24*time.Hour, startEnd)
			m.dur0 = time.Duration(10+r.IntN(31)) * time.Minute
			m.growth = time.Duration(30+r.IntN(61)) * time.Second
			return m
		}
	}
	// office: every 15 min on weekdays, from 07:00-09:45 to 16:00-19:00.
	office := func(r *rand.Rand) (calendar, time.Duration) {
		from := 7*60 + 15*r.IntN(12)
		to := 16*60 + 15*r.IntN(13)
		return weekdays(quarterHours(from, to)...), 15 * time.Minute
	}
	return []*Family{
		{Name: "poisson-0.2", Description: "seasonal Poisson, 0.2 events/h on average (hour-of-day × weekend profile, local time)",
			Zones: zones, Incidents: rateIncidents, newModel: seasonal(0.2)},
		{Name: "poisson-2", Description: "seasonal Poisson, 2 events/h", Zones: zones, Incidents: rateIncidents, newModel: seasonal(2)},
		{Name: "poisson-20", Description: "seasonal Poisson, 20 events/h", Zones: zones, Incidents: rateIncidents, newModel: seasonal(20)},
		{Name: "poisson-200", Description: "seasonal Poisson, 200 events/h", Zones: zones, Incidents: rateIncidents, newModel: seasonal(200)},
		{Name: "negbin-5", Description: "seasonal negative binomial, 5 events/h (hourly Gamma mixing, size r in [1,10], plus a daily level with CV 18%)",
			Zones: zones, Incidents: rateIncidents, newModel: negbin(5)},
		{Name: "negbin-50", Description: "seasonal negative binomial, 50 events/h", Zones: zones, Incidents: rateIncidents, newModel: negbin(50)},
		{Name: "workhours-20", Description: "20 events/h on average, all of it on weekdays within working hours (8-10 h from 07:00-10:00 local), none at night or at weekends",
			Zones: zones, Incidents: rateIncidents, newModel: func(r *rand.Rand) model { return newWorkHours(r, 20) }},
		{Name: "weekdays-5", Description: "seasonal Poisson, 5 events/h on average, weekdays only",
			Zones: zones, Incidents: rateIncidents, newModel: func(r *rand.Rand) model { return newSeasonal(r, 5).weekdaysOnly() }},
		{Name: "bursty-0.3", Description: "bursty webhooks: seasonal Poisson bursts at 0.3/h (hours apart), 1-20 events per burst (uniform), ~5 s apart",
			Zones: zones, Incidents: rateIncidents, newModel: bursty(0.3)},
		{Name: "bursty-3", Description: "busy bursty source: bursts at 3/h, 1-20 events each", Zones: zones, Incidents: rateIncidents, newModel: bursty(3)},
		{Name: "trend-20", Description: "seasonal Poisson from 20 events/h, growing to 2× or shrinking to 0.5× over the eight weeks (not designed for)",
			Zones: zones, Incidents: rateIncidents, newModel: func(r *rand.Rand) model {
				m := newSeasonal(r, 20)
				m.trend = math.Log(2) / DefaultDays
				if r.IntN(2) == 0 {
					m.trend = -m.trend
				}
				return m
			}},
		{Name: "berlin-on-utc-20", Description: "seasonal Poisson, 20 events/h following Europe/Berlin local time, on a beet whose zone was left at UTC",
			Zones: berlin, BeetZone: "UTC", Incidents: rateIncidents, newModel: seasonal(20)},

		{Name: "cron-5min", Description: "every 5 min, one ping at the end of each run", Schedule: true,
			Zones: zones, Incidents: with(scheduleIncidents, firstWeekShort...), Episodes: scheduleEpisodes, newModel: job(false, every(5*time.Minute))},
		{Name: "cron-hourly", Description: "hourly at a fixed minute, runs take a variable 0-2 min or so", Schedule: true,
			Zones: zones, Incidents: with(scheduleIncidents, firstWeekShort...), Episodes: scheduleEpisodes, newModel: job(false, every(time.Hour))},
		{Name: "cron-daily", Description: "daily at a fixed local time", Schedule: true,
			Zones: zones, Incidents: with(scheduleIncidents, firstWeekDaily...), Episodes: scheduleEpisodes, newModel: job(false, daily)},
		{Name: "cron-daily-delay", Description: "daily at a fixed local time, each run started at random up to 1-8 h later (a systemd timer's RandomizedDelaySec)", Schedule: true,
			Zones: zones, Incidents: with(scheduleIncidents, firstWeekDaily...), newModel: delayedDaily(false)},
		{Name: "cron-weekdays", Description: "weekdays only (Mon-Fri) at a fixed local time between 05:00 and 09:00", Schedule: true,
			Zones: zones, Incidents: with(scheduleIncidents, firstWeekDaily...), newModel: job(false, func(r *rand.Rand) (calendar, time.Duration) {
				return weekdays(minuteOfDay(r, 5, 9)), 24 * time.Hour
			})},
		{Name: "cron-twice-daily", Description: "twice a day at two fixed local times 8-14 h apart", Schedule: true,
			Zones: zones, Incidents: scheduleIncidents, newModel: job(false, func(r *rand.Rand) (calendar, time.Duration) {
				a := minuteOfDay(r, 0, 10)
				return everyDay(a, a+8*60+r.IntN(6*60)), 12 * time.Hour
			})},
		{Name: "cron-workhours", Description: "every 15 min from 09:00 to 17:00 on weekdays, local", Schedule: true,
			Zones: zones, Incidents: scheduleIncidents, newModel: job(false, func(*rand.Rand) (calendar, time.Duration) {
				return weekdays(quarterHours(9*60, 17*60)...), 15 * time.Minute
			})},
		{Name: "startend-hourly", Description: "hourly, a start ping and an end ping per run", Schedule: true,
			Zones: zones, Incidents: startEndIncidents, newModel: job(true, every(time.Hour))},
		{Name: "startend-daily", Description: "daily at a fixed local time, a start ping and an end ping per run", Schedule: true,
			Zones: zones, Incidents: startEndIncidents, newModel: job(true, daily)},
		{Name: "startend-daily-delay", Schedule: true,
			Description: "daily at a fixed local time, each run started at random up to 1-8 h later, with a start ping and an end ping (a backup run by runitor from a systemd timer with RandomizedDelaySec; untuned until 2026-12-01)",
			Zones:       zones, Incidents: startEndIncidents, newModel: delayedDaily(true)},
		{Name: "berlin-on-utc-daily", Description: "daily at a fixed Europe/Berlin time between 05:00 and 09:00, on a beet whose zone was left at UTC", Schedule: true,
			Zones: berlin, BeetZone: "UTC", Incidents: scheduleIncidents, newModel: job(false, func(r *rand.Rand) (calendar, time.Duration) {
				return everyDay(minuteOfDay(r, 5, 9)), 24 * time.Hour
			})},
		{Name: "cron-monthly", Description: "monthly on a fixed day (1-28) at a fixed local time; 160-day streams (not designed for)", Schedule: true,
			Zones: zones, Days: 160, Incidents: scheduleIncidents[:1], newModel: job(false, func(r *rand.Rand) (calendar, time.Duration) {
				return monthlyCal{day: 1 + r.IntN(28), min: minuteOfDay(r, 0, 24)}, 30 * 24 * time.Hour
			})},
		{Name: "cron-semi-monthly", Description: "on two days of each month 13-17 days apart (1st and 15th, 1st and 16th, 5th and 20th, 10th and 25th) at a fixed local time, runs as long as a daily job's; 160-day streams", Schedule: true,
			Zones: zones, Days: 160, Incidents: scheduleIncidents[:1], newModel: job(false, func(r *rand.Rand) (calendar, time.Duration) {
				pairs := [][]int{{1, 15}, {1, 16}, {5, 20}, {10, 25}}
				return monthDaysCal{days: pairs[r.IntN(len(pairs))], min: minuteOfDay(r, 0, 24)}, 24 * time.Hour
			})},
		{Name: "schedule-change", Description: "an hourly job whose minute moves, or a daily job whose time moves by 1-6 h, once between days 21 and 35 (not designed for; alarms in the two periods after the change are excused)",
			Schedule: true, Zones: zones, Incidents: scheduleIncidents, newModel: func(r *rand.Rand) model {
				var m *scheduleModel
				if r.IntN(2) == 0 {
					c, p := every(time.Hour)(r)
					m = newSchedule(r, c, p, false)
					m.changed = everyCal{every: time.Hour, offset: (c.(everyCal).offset + time.Duration(10+r.IntN(41))*time.Minute) % time.Hour}
				} else {
					at := minuteOfDay(r, 0, 24)
					m = newSchedule(r, everyDay(at), 24*time.Hour, false)
					shift := 60 + r.IntN(5*60+1)
					if r.IntN(2) == 0 {
						shift = -shift
					}
					m.changed = everyDay(((at+shift)%1440 + 1440) % 1440)
				}
				m.changeAfter = time.Duration(21*24+r.IntN(14*24)) * time.Hour
				return m
			}},

		// Untuned: shapes added after the detector's parameters were chosen.
		{Name: "u-cron-15min-office", Untuned: true, Schedule: true,
			Description: "every 15 min on weekdays only, from a start between 07:00 and 09:45 to an end between 16:00 and 19:00 local (untuned)",
			Zones:       zones, Incidents: with(scheduleIncidents, firstWeekShort...), newModel: job(false, office)},
		{Name: "u-cron-monthly-1st", Untuned: true, Schedule: true,
			Description: "`0 3 1 * *`: 03:00 local on the 1st of every month, runs as long as a daily job's; 160-day streams (untuned)",
			Zones:       zones, Days: 160, Incidents: scheduleIncidents[:1], newModel: job(false, func(*rand.Rand) (calendar, time.Duration) {
				return monthlyCal{day: 1, min: 3 * 60}, 24 * time.Hour // runs take as long as a daily job's
			})},
		{Name: "u-cron-month-end", Untuned: true, Schedule: true,
			Description: "the last day of every month at a fixed local time, runs as long as a daily job's; 160-day streams (untuned)",
			Zones:       zones, Days: 160, Incidents: scheduleIncidents[:1], newModel: job(false, func(r *rand.Rand) (calendar, time.Duration) {
				return lastDayCal{min: minuteOfDay(r, 0, 24)}, 24 * time.Hour
			})},
		{Name: "u-cron-twice-uneven", Untuned: true, Schedule: true,
			Description: "twice a day at two fixed local times 2-5 h apart, at odd minutes (e.g. 06:35 and 09:50) (untuned)",
			Zones:       zones, Incidents: with(scheduleIncidents, firstWeekDaily...), newModel: job(false, func(r *rand.Rand) (calendar, time.Duration) {
				a := minuteOfDay(r, 0, 18)
				return everyDay(a, a+2*60+r.IntN(3*60)), 12 * time.Hour
			})},
		{Name: "u-cron-hourly-extra", Untuned: true, Schedule: true,
			Description: "hourly at a fixed minute; incidents: it starts running 4 times an hour for a day (expect a \"runs too often\" flag), and first-week stops; " +
				"episode: one run by hand between two runs (expect nothing) (untuned)",
			Zones: zones, Incidents: with(firstWeekShort,
				IncidentSpec{Name: "4 runs an hour for 1d", Kind: IncidentTooOften, PerPeriod: 4, Duration: 24 * time.Hour}),
			Episodes: []IncidentSpec{{Name: "one run by hand", Kind: IncidentExtra, Runs: 1, Extra: 1}},
			newModel: job(false, every(time.Hour))},
		{Name: "u-cron-hourly-curl", Untuned: true, Schedule: true,
			Description: "hourly at a fixed minute, pinged as the cron line starts: within 1-5 s of its time, 1 run in 100 up to 4× that (untuned)",
			Zones:       zones, Incidents: with(scheduleIncidents, firstWeekShort...), Episodes: scheduleEpisodes, newModel: curlJob(every(time.Hour))},
		{Name: "u-heartbeat-1min", Untuned: true, Schedule: true,
			Description: "every minute (`* * * * *`, or a daemon's loop), pinged within 1-5 s of the minute, 1 ping in 100 up to 4× that: too often for a schedule, whose runs are a minute apart at least (untuned)",
			Zones:       zones, Incidents: with(scheduleIncidents[:2], firstWeekShort...), newModel: curlJob(every(time.Minute))},
		{Name: "u-loop-15min", Untuned: true, Schedule: true,
			Description: "a job run in a loop, `sleep 900` after each run (or a systemd timer's OnUnitActiveSec=15min), pinged as each run ends: runs of 5-30 s plus up to 30 s-2 min, 1 run in 100 up to 3× that more; its pings drift off any clock (untuned)",
			Zones:       zones, Incidents: with(scheduleIncidents[:2], firstWeekShort...),
			newModel: loopJob(15*time.Minute, 5*time.Second, 30*time.Second, 30*time.Second, 2*time.Minute)},
		{Name: "u-loop-hourly", Untuned: true, Schedule: true,
			Description: "a job run in a loop, `sleep 3600` after each run, pinged as each run ends: runs of 10 s-1 min plus up to 1-5 min, 1 run in 100 up to 3× that more (untuned)",
			Zones:       zones, Incidents: with(scheduleIncidents[:2], firstWeekShort...),
			newModel: loopJob(time.Hour, 10*time.Second, time.Minute, time.Minute, 5*time.Minute)},
		{Name: "u-cron-daily-curl", Untuned: true, Schedule: true,
			Description: "daily at a fixed local time, pinged as the cron line starts: within 1-5 s of its time, 1 run in 100 up to 4× that (untuned)",
			Zones:       zones, Incidents: with(scheduleIncidents, firstWeekDaily...), Episodes: scheduleEpisodes, newModel: curlJob(daily)},
		{Name: "u-cron-daily-short", Untuned: true, Schedule: true,
			Description: "daily at a fixed local time, pinged as a short job ends (`job && curl …`): runs of 30 s-2 min varying by 1-4 min, 1 run in 100 up to 4× that (untuned)",
			Zones:       zones, Incidents: with(scheduleIncidents, firstWeekDaily...), Episodes: scheduleEpisodes, newModel: func(r *rand.Rand) model {
				m := job(false, daily)(r).(*scheduleModel)
				m.dur0, m.spread = time.Duration(30+r.IntN(91))*time.Second, time.Duration(1+r.IntN(4))*time.Minute
				return m
			}},
		{Name: "u-cron-15min-slow-tail", Untuned: true, Schedule: true,
			Description: "every 15 min all day, pinged as the job ends: runs vary by 1-4% of the period, and 1 run in 10 (not 1 in 100) comes up to 4× that late (a job that waits on a lock now and then) (untuned)",
			Zones:       zones, Incidents: with(scheduleIncidents, firstWeekShort...), Episodes: scheduleEpisodes, newModel: func(r *rand.Rand) model {
				m := job(false, every(15*time.Minute))(r).(*scheduleModel)
				m.lateP = 0.1
				return m
			}},
		{Name: "u-cron-5min-midday-setup", Untuned: true, Schedule: true, SetupFrom: 9, SetupTo: 18,
			Description: "every 5 min all day, first seen at a random time between 09:00 and 18:00 local (set up during a working day); incidents include a stop on its first day (untuned)",
			Zones:       zones, Incidents: with(scheduleIncidents, append([]IncidentSpec{firstDay}, firstWeekShort...)...), Episodes: scheduleEpisodes,
			newModel: job(false, every(5*time.Minute))},
		{Name: "u-utc-server-office", Untuned: true, Schedule: true,
			Description: "every 15 min on weekdays from a start between 07:00 and 09:45 to an end between 16:00 and 19:00 on a server's UTC clock, on a beet in Europe/Berlin (its account's zone): an hour later there from the spring change, earlier from the autumn one (untuned)",
			Zones:       utc, BeetZone: "Europe/Berlin", Incidents: with(scheduleIncidents, firstWeekShort...), newModel: job(false, office)},
		{Name: "u-utc-server-night", Untuned: true, Schedule: true,
			Description: "every 15 min from 00:00 to a last run between 04:45 and 06:45 on a server's UTC clock (a night's batch window), on a beet in Europe/Berlin (untuned)",
			Zones:       utc, BeetZone: "Europe/Berlin", Incidents: scheduleIncidents, newModel: job(false, func(r *rand.Rand) (calendar, time.Duration) {
				return everyDay(quarterHours(0, (5+r.IntN(3))*60)...), 15 * time.Minute
			})},
		{Name: "u-cron-15min-office-midday-setup", Untuned: true, Schedule: true, SetupFrom: 9, SetupTo: 18,
			Description: "every 15 min on weekdays only, from a start between 07:00 and 09:45 to an end between 16:00 and 19:00 local, first seen at a random time between 09:00 and 18:00 local (untuned)",
			Zones:       zones, Incidents: with(scheduleIncidents, append([]IncidentSpec{firstDay}, firstWeekShort...)...), newModel: job(false, office)},
		{Name: "u-cron-hourly-late-once", Untuned: true, Schedule: true,
			Description: "hourly at a fixed minute, with one run in its second week (days 7-13) 20-29 min late, past its grace and under half the period (the alarm it raises is excused); incidents after it (untuned)",
			Zones:       zones, Incidents: scheduleIncidents, Episodes: scheduleEpisodes, newModel: func(r *rand.Rand) model {
				m := job(false, every(time.Hour))(r).(*scheduleModel)
				m.lateOnceAfter = time.Duration(7*24*60+r.IntN(6*24*60)) * time.Minute
				m.lateOnce = time.Duration(20*60+r.IntN(9*60)) * time.Second
				return m
			}},
		{Name: "u-cron-weekly", Untuned: true, Schedule: true,
			Description: "weekly on a fixed day at a fixed local time (`0 3 * * 0`), runs as long as a daily job's; 160-day streams (untuned)",
			Zones:       zones, Days: 160, Incidents: scheduleIncidents, newModel: job(false, func(r *rand.Rand) (calendar, time.Duration) {
				cal := dailyCal{mins: []int{minuteOfDay(r, 0, 24)}}
				cal.days[r.IntN(7)] = true
				return cal, 24 * time.Hour // runs take as long as a daily job's
			})},
		{Name: "u-cron-5min-skips", Untuned: true, Schedule: true,
			Description: "every 5 min, pinging only when the run had work (or only on success): each run skipped at random, 0.3-5% of them (log-uniform); the oracle waits for as many missed runs in a row as its budget needs; incidents are stops (untuned)",
			Zones:       zones, Incidents: with(scheduleIncidents[1:2], firstWeekShort...), newModel: skipping(every(5 * time.Minute))},
		{Name: "u-cron-hourly-skips", Untuned: true, Schedule: true,
			Description: "hourly at a fixed minute, pinging only when the run had work: each run skipped at random, 0.3-5% of them (log-uniform); incidents are stops (untuned)",
			Zones:       zones, Incidents: with(scheduleIncidents[1:2], firstWeekShort...), newModel: skipping(every(time.Hour))},
		{Name: "u-batch-nightly", Untuned: true, Schedule: true,
			Description: "a nightly batch at a fixed local time that sends one event per item it processed (an invoice run's 200-600 invoices, each its own request, over up to 15 min): business events as a job (untuned)",
			Zones:       zones, Incidents: with(scheduleIncidents, firstWeekDaily...), newModel: batchJob(daily, 200, 600, 15*time.Minute)},
		{Name: "u-batch-hourly", Untuned: true, Schedule: true,
			Description: "an hourly sync at a fixed minute that sends one event per record it synced (20-80, each its own request, over up to 2 min 30 s) (untuned)",
			Zones:       zones, Incidents: with(scheduleIncidents, firstWeekShort...), newModel: batchJob(every(time.Hour), 20, 80, 150*time.Second)},
		{Name: "u-backup-growing", Untuned: true, Schedule: true,
			Description: "a nightly backup at a fixed local time between 00:00 and 05:00, pinged as it ends (`backup.sh && curl …`), its runs 10-40 min long and 0.5-1.5 min longer every day as its data grows (untuned)",
			Zones:       zones, Incidents: with(scheduleIncidents[:2], firstWeekDaily...), newModel: growing(false)},
		{Name: "u-backup-growing-startend", Untuned: true, Schedule: true,
			Description: "u-backup-growing pinging as each run starts and as it ends; a stuck run too (untuned)",
			Zones:       zones, Incidents: with(scheduleIncidents[:2], append([]IncidentSpec{startEndIncidents[3]}, firstWeekDaily...)...), newModel: growing(true)},
		{Name: "u-cron-10min-long-runs", Untuned: true, Schedule: true,
			Description: "every 10 min all day, pinged as the job ends, its runs taking most of the interval: 2-4 min plus up to 3-6 min, 1 run in 100 up to 3× that more (an ETL step every 10 min; no run is late beyond doubt) (untuned)",
			Zones:       zones, Incidents: with(scheduleIncidents[:2], firstWeekShort...), newModel: func(r *rand.Rand) model {
				m := job(false, every(10*time.Minute))(r).(*scheduleModel)
				m.dur0, m.spread = time.Duration(120+r.IntN(121))*time.Second, time.Duration(180+r.IntN(181))*time.Second
				return m
			}},
		{Name: "u-heartbeat-1min-flaky", Untuned: true, Schedule: true,
			Description: "u-heartbeat-1min that was down twice, 20 min-3 h each, on days 8-11 and 13-16; incidents after (untuned)",
			Zones:       zones, Incidents: scheduleIncidents[:2], newModel: flaky(curlJob(every(time.Minute)))},
		{Name: "u-loop-15min-flaky", Untuned: true, Schedule: true,
			Description: "u-loop-15min that was down twice, as u-heartbeat-1min-flaky (untuned)",
			Zones:       zones, Incidents: scheduleIncidents[:2],
			newModel: flaky(loopJob(15*time.Minute, 5*time.Second, 30*time.Second, 30*time.Second, 2*time.Minute))},
		{Name: "u-cron-5min-flaky", Untuned: true, Schedule: true,
			Description: "every 5 min all day, pinged as the job ends, down twice as u-heartbeat-1min-flaky (untuned)",
			Zones:       zones, Incidents: scheduleIncidents, newModel: flaky(job(false, every(5*time.Minute)))},
		{Name: "u-cron-hourly-flaky", Untuned: true, Schedule: true,
			Description: "hourly at a fixed minute, pinged as the job ends, down twice as u-heartbeat-1min-flaky (untuned)",
			Zones:       zones, Incidents: scheduleIncidents, newModel: flaky(job(false, every(time.Hour)))},
		{Name: "u-shift-poisson-200", Untuned: true,
			Description: "seasonal Poisson at 200 events/h (a busy checkout) whose level moves for a day or more: down to 50% for 4 days, to 60% for a day, up 1.5× for a day (half the customers cannot pay; a partner's traffic added) (untuned)",
			Zones:       zones, Incidents: levelShifts, newModel: seasonal(200)},
		{Name: "u-shift-negbin-50", Untuned: true,
			Description: "negative binomial at 50 events/h (as negbin-50, days vary by about 18%) whose level moves for a day or more, as u-shift-poisson-200 (untuned)",
			Zones:       zones, Incidents: levelShifts, newModel: negbin(50)},
		{Name: "u-checkout-holiday-50", Untuned: true,
			Description: "a checkout: seasonal negative binomial, 50 events/h, with one public holiday on a weekday between days 20 and 45 whose traffic follows the Sunday profile (untuned)",
			Zones:       zones, Incidents: rateIncidents, newModel: func(r *rand.Rand) model {
				m := negbin(50)(r).(*rateModel)
				m.holiday = 20 + r.IntN(25)
				return m
			}},
		{Name: "u-sparse-1-a-day", Untuned: true,
			Description: "seasonal Poisson at about 1 event a day (a quiet webhook or sign-up form): random times whose gaps can pass for a job's (untuned)",
			Zones:       zones, Incidents: rateIncidents, newModel: seasonal(1.0 / 24)},
		{Name: "u-webhook-nightly-quiet-10", Untuned: true,
			Description: "a webhook, seasonal Poisson at 10 events/h on average, silent every night for 6-9 h from between 21:00 and 01:00 local (untuned)",
			Zones:       zones, Incidents: rateIncidents, newModel: func(r *rand.Rand) model {
				m := newSeasonal(r, 10)
				from := 21 + r.IntN(5)
				for h := from; h < from+6+r.IntN(4); h++ {
					m.hour[h%24] = 0
				}
				m.normalise()
				return m
			}},
	}
}

// Tuned returns the families a detector may be tuned on: all but the
// untuned ones.
func Tuned(fs []*Family) []*Family {
	var out []*Family
	for _, f := range fs {
		if !f.Untuned {
			out = append(out, f)
		}
	}
	return out
}

// with returns a new list: list, then more.
func with(list []IncidentSpec, more ...IncidentSpec) []IncidentSpec {
	return append(append([]IncidentSpec(nil), list...), more...)
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
