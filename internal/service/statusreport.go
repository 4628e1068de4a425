package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/schedule"
)

// A status page's public report is built from a few indexed reads (the
// page, its beets, their flips of the last 90 days, notices, maintenance,
// the open global incident) and then kept for ReportTTL, so a page that
// many people reload costs one build per TTL per instance. Changes made
// through this instance show at once; state changes and other instances'
// changes within the TTL.
const (
	ReportTTL = 30 * time.Second
	// maxReports bounds the cache; past it, it starts over.
	maxReports = 1000
	// maxStatusFlips bounds the flips read for one page's history bars; a
	// limit cuts the oldest, so only the far end of a flapping beet's bars
	// is approximate.
	maxStatusFlips = 100_000
	// maxUpcoming bounds the maintenance windows a page lists.
	maxUpcoming     = 10
	upcomingHorizon = 30 * 24 * time.Hour
)

// Overall is a page's banner, worst first.
type Overall string

const (
	OverallMajor       Overall = "major_outage"
	OverallPartial     Overall = "partial_outage"
	OverallDegraded    Overall = "degraded"
	OverallMaintenance Overall = "maintenance"
	OverallOperational Overall = "operational"
)

// DayLevel is one day's bar: the worst that happened that day.
type DayLevel string

const (
	DayNone     DayLevel = "none"     // the beet did not exist, was new or paused
	DayUp       DayLevel = "up"       // no bad time
	DayDegraded DayLevel = "degraded" // anomalous for a while
	DayDown     DayLevel = "down"     // down for a while
)

// StatusReport is what a public status page shows. It holds names, states
// and times only: no token, no ID of a beet, page, notice or account.
type StatusReport struct {
	Slug        string              `json:"slug"`
	Title       string              `json:"title"`
	Description string              `json:"description,omitempty"`
	Overall     Overall             `json:"status"`
	Incident    *PublicIncident     `json:"incident"`
	Sections    []StatusSection     `json:"sections"`
	Truncated   bool                `json:"truncated"` // more beets match than MaxStatusPageBeets, which it shows
	Maintenance []PublicWindow      `json:"maintenance"`
	Notices     []PublicNotice      `json:"notices"`
	Days        []string            `json:"days"` // the history's dates, oldest first (YYYY-MM-DD, in Zone)
	Zone        string              `json:"timezone"`
	BuiltAt     time.Time           `json:"generated_at"`
	Counts      map[beet.Status]int `json:"-"`
	// Version is a hash of everything but BuiltAt: the same report gives
	// the same ETag, so a reload that changed nothing is a 304.
	Version string `json:"-"`
}

// PublicIncident is an open global-guard incident, without its reason
// (which counts beets of every account).
type PublicIncident struct {
	StartedAt time.Time `json:"started_at"`
}

// StatusSection is one tag's beets (or, named "", the beets listed by ID
// that carry none of the page's tags).
type StatusSection struct {
	Name  string       `json:"name"`
	Beets []StatusLine `json:"beets"`
}

// StatusLine is one beet on a page. Key is its place on the page (1, 2, …),
// which names it in the JSON without revealing its ID.
type StatusLine struct {
	Key    int         `json:"key"`
	Name   string      `json:"name"`
	Status beet.Status `json:"status"`
	Since  time.Time   `json:"since"`
	// Uptime is the share of watched time in the history that was not
	// down, in percent; nil when the beet was never watched in it.
	Uptime *float64   `json:"uptime_percent"`
	Days   []DayLevel `json:"days"` // one per report day, oldest first
}

// PublicWindow is a current or upcoming maintenance window.
type PublicWindow struct {
	Scope    string    `json:"scope"` // "" for all of the page's beets, else a beet's name
	StartsAt time.Time `json:"starts_at"`
	EndsAt   time.Time `json:"ends_at"`
	Note     string    `json:"note,omitempty"`
	Active   bool      `json:"active"`
}

// PublicNotice is a notice as the page shows it.
type PublicNotice struct {
	Number     int                 `json:"number"`
	Title      string              `json:"title"`
	Body       string              `json:"body,omitempty"`
	Severity   beet.NoticeSeverity `json:"severity"`
	Resolved   bool                `json:"resolved"`
	ResolvedAt *time.Time          `json:"resolved_at,omitempty"`
	CreatedAt  time.Time           `json:"created_at"`
	UpdatedAt  time.Time           `json:"updated_at"`
}

type reportCache struct {
	mu       sync.Mutex
	byslug   map[string]*cachedReport
	building map[string]*reportCall
}

type cachedReport struct {
	r  *StatusReport
	at time.Time
}

// reportCall is one build that later callers for the same slug wait on,
// so a burst of requests after the TTL builds the report once.
type reportCall struct {
	done chan struct{}
	r    *StatusReport
	err  error
}

func (c *reportCache) forget(slug string) {
	c.mu.Lock()
	delete(c.byslug, slug)
	c.mu.Unlock()
}

// PublicStatus returns the public report of the page with this slug, or
// ENOTFOUND. Anyone may call it: the report holds nothing secret.
func (s *Service) PublicStatus(ctx context.Context, slug string) (*StatusReport, error) {
	if beet.ValidateSlug(slug) != nil {
		return nil, beet.Errorf(beet.ENOTFOUND, "no status page %q", slug)
	}
	now := s.Now()
	c := &s.reports
	c.mu.Lock()
	if e, ok := c.byslug[slug]; ok && now.Sub(e.at) < ReportTTL && !now.Before(e.at) {
		c.mu.Unlock()
		return e.r, nil
	}
	if call, ok := c.building[slug]; ok {
		c.mu.Unlock()
		select {
		case <-call.done:
			return call.r, call.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if c.building == nil {
		c.building = map[string]*reportCall{}
	}
	call := &reportCall{done: make(chan struct{})}
	c.building[slug] = call
	c.mu.Unlock()

	// The build is shared, so one caller's cancelled request must not fail
	// the others: it runs without the caller's cancellation, bounded.
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	call.r, call.err = s.buildReport(bctx, slug, now)
	cancel()

	c.mu.Lock()
	delete(c.building, slug)
	if call.err == nil {
		if c.byslug == nil || len(c.byslug) >= maxReports {
			c.byslug = map[string]*cachedReport{}
		}
		c.byslug[slug] = &cachedReport{r: call.r, at: now}
	}
	c.mu.Unlock()
	close(call.done)
	return call.r, call.err
}

// cutOne drops the last beet by name that is not in trouble (the store
// keeps those first when it cuts), or the last one if all are.
func cutOne(bs []*beet.StatusPageBeet) []*beet.StatusPageBeet {
	drop := len(bs) - 1
	for i := drop; i >= 0; i-- {
		if !bs[i].Status.InTrouble() {
			drop = i
			break
		}
	}
	return slices.Delete(bs, drop, drop+1)
}

func (s *Service) buildReport(ctx context.Context, slug string, now time.Time) (*StatusReport, error) {
	p, err := s.store.FindStatusPageBySlug(ctx, slug)
	if err != nil {
		return nil, err
	}
	loc := time.UTC
	if a, err := s.store.FindAccountByID(ctx, p.AccountID); err != nil {
		return nil, err
	} else if l, err := time.LoadLocation(a.Timezone); err == nil {
		loc = l
	}
	bs, err := s.store.FindStatusPageBeets(ctx, p.AccountID, p.Tags, p.BeetIDs, beet.MaxStatusPageBeets+1)
	if err != nil {
		return nil, err
	}
	r := &StatusReport{Slug: p.Slug, Title: p.Title, Description: p.Description, Zone: loc.String(), BuiltAt: now,
		Sections: []StatusSection{}, Maintenance: []PublicWindow{}, Notices: []PublicNotice{}, Counts: map[beet.Status]int{}}
	if len(bs) > beet.MaxStatusPageBeets { // how many more is not counted: that is not cheap
		r.Truncated, bs = true, cutOne(bs)
	}

	// Days: the last StatusHistoryDays calendar days in the account's zone,
	// today last.
	y, m, d := now.In(loc).Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, loc)
	first := today.AddDate(0, 0, -(beet.StatusHistoryDays - 1))
	starts := make([]time.Time, beet.StatusHistoryDays+1)
	for i := range starts {
		starts[i] = first.AddDate(0, 0, i)
	}
	starts[beet.StatusHistoryDays] = now // the last day ends now
	for _, t := range starts[:beet.StatusHistoryDays] {
		r.Days = append(r.Days, t.Format("2006-01-02"))
	}

	ids := make([]int64, len(bs))
	for i, b := range bs {
		ids[i] = b.ID
	}
	flips, err := s.store.FindStatusFlips(ctx, ids, first, maxStatusFlips)
	if err != nil {
		return nil, err
	}
	byBeet := map[int64][]*beet.StatusFlip{}
	for i := len(flips) - 1; i >= 0; i-- { // oldest first
		f := flips[i]
		byBeet[f.BeetID] = append(byBeet[f.BeetID], f)
	}

	// Sections: one per page tag, in the page's order; a beet goes to its
	// first tag on the page, and beets listed by ID that carry none of them
	// go to a last, unnamed section.
	sectionOf := map[string]int{}
	for _, t := range p.Tags {
		sectionOf[t] = len(r.Sections)
		r.Sections = append(r.Sections, StatusSection{Name: t, Beets: []StatusLine{}})
	}
	other := -1
	for _, b := range bs {
		line := StatusLine{Name: b.Name, Status: b.Status, Since: b.StatusSince}
		line.Days, line.Uptime = history(b, byBeet[b.ID], starts)
		r.Counts[b.Status]++
		sec := -1
		for _, t := range p.Tags {
			if slices.Contains(b.Tags, t) {
				sec = sectionOf[t]
				break
			}
		}
		if sec < 0 {
			if other < 0 {
				other = len(r.Sections)
				r.Sections = append(r.Sections, StatusSection{Beets: []StatusLine{}})
			}
			sec = other
		}
		r.Sections[sec].Beets = append(r.Sections[sec].Beets, line)
	}
	key := 0
	for _, sec := range r.Sections { // keys count in the order the page shows
		for i := range sec.Beets {
			key++
			sec.Beets[i].Key = key
		}
	}

	if err := s.reportMaintenance(ctx, r, p, bs, now); err != nil {
		return nil, err
	}
	ns, err := s.store.FindStatusNotices(ctx, p.ID, beet.MaxNoticesPerPage)
	if err != nil {
		return nil, err
	}
	openMajor, openMinor := false, false
	for _, n := range ns {
		r.Notices = append(r.Notices, PublicNotice{Number: n.Number, Title: n.Title, Body: n.Body, Severity: n.Severity,
			Resolved: n.Resolved != nil, ResolvedAt: n.Resolved, CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt})
		if n.Resolved == nil {
			openMajor = openMajor || n.Severity == beet.SeverityMajor
			openMinor = openMinor || n.Severity == beet.SeverityMinor
		}
	}
	inc, err := s.store.OpenIncident(ctx)
	if err != nil {
		return nil, err
	}
	if inc != nil {
		r.Incident = &PublicIncident{StartedAt: inc.StartedAt}
	}

	maintenance := false
	for _, w := range r.Maintenance {
		maintenance = maintenance || w.Active
	}
	down, watched := r.Counts[beet.StatusDown], len(bs)-r.Counts[beet.StatusPaused]
	switch {
	case openMajor || (watched > 0 && down == watched):
		r.Overall = OverallMajor
	case down > 0:
		r.Overall = OverallPartial
	case openMinor || r.Counts[beet.StatusAnomalous] > 0 || r.Incident != nil:
		r.Overall = OverallDegraded
	case maintenance:
		r.Overall = OverallMaintenance
	default:
		r.Overall = OverallOperational
	}

	built := r.BuiltAt
	r.BuiltAt = time.Time{}
	body, err := json.Marshal(r)
	r.BuiltAt = built
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	r.Version = hex.EncodeToString(sum[:12])
	return r, nil
}

// history turns a beet's flips since starts[0] (oldest first) into one
// level per day and the share of watched time that was not down.
// starts[d] is the start of day d and starts[len-1] the end of the last.
func history(b *beet.StatusPageBeet, flips []*beet.StatusFlip, starts []time.Time) ([]DayLevel, *float64) {
	n := len(starts) - 1
	// The state at the window's start is what its first flip left, or the
	// current state if nothing changed since; before its creation a beet
	// has no time at all.
	state := b.Status
	if len(flips) > 0 {
		state = flips[0].From
	}
	type span struct {
		from, to time.Time
		st       beet.Status
	}
	var spans []span
	cur := starts[0]
	if b.CreatedAt.After(cur) {
		cur = b.CreatedAt
	}
	for _, f := range flips {
		if f.At.After(cur) {
			spans = append(spans, span{cur, f.At, state})
			cur = f.At
		}
		state = f.To
	}
	if starts[n].After(cur) {
		spans = append(spans, span{cur, starts[n], state})
	}
	down, degraded, up := make([]time.Duration, n), make([]time.Duration, n), make([]time.Duration, n)
	d := 0
	for _, sp := range spans {
		for d < n && !starts[d+1].After(sp.from) {
			d++
		}
		for e := d; e < n && starts[e].Before(sp.to); e++ {
			in := overlap(sp.from, sp.to, starts[e], starts[e+1])
			switch sp.st {
			case beet.StatusDown:
				down[e] += in
			case beet.StatusAnomalous:
				degraded[e] += in
			case beet.StatusUp, beet.StatusLearning:
				up[e] += in
			}
		}
	}
	days := make([]DayLevel, n)
	var watched, downAll time.Duration
	for e := range days {
		switch {
		case down[e] > 0:
			days[e] = DayDown
		case degraded[e] > 0:
			days[e] = DayDegraded
		case up[e] > 0:
			days[e] = DayUp
		default:
			days[e] = DayNone
		}
		watched += down[e] + degraded[e] + up[e]
		downAll += down[e]
	}
	if watched == 0 {
		return days, nil
	}
	pct := float64(int(10000*float64(watched-downAll)/float64(watched))) / 100 // two decimals, never rounded up to 100
	return days, &pct
}

// overlap is how long [from, to) and [dayFrom, dayTo) share.
func overlap(from, to, dayFrom, dayTo time.Time) time.Duration {
	if dayFrom.After(from) {
		from = dayFrom
	}
	if dayTo.Before(to) {
		to = dayTo
	}
	return to.Sub(from)
}

// reportMaintenance lists the account's windows that cover the page's
// beets (its own or account-wide) and are active now or start within
// upcomingHorizon, soonest first.
func (s *Service) reportMaintenance(ctx context.Context, r *StatusReport, p *beet.StatusPage, bs []*beet.StatusPageBeet, now time.Time) error {
	ws, err := s.store.FindMaintenance(ctx, p.AccountID, 0)
	if err != nil {
		return err
	}
	names := make(map[int64]string, len(bs))
	for _, b := range bs {
		names[b.ID] = b.Name
	}
	for _, w := range ws {
		scope := ""
		if w.BeetID != 0 {
			name, ok := names[w.BeetID]
			if !ok {
				continue // a window of a beet this page does not show
			}
			scope = name
		}
		var start, end time.Time
		switch {
		case w.Cron == "" && w.Start != nil && w.End != nil:
			start, end = *w.Start, *w.End
		case w.Cron != "":
			c, err := schedule.ParseCron(w.Cron)
			loc, lerr := time.LoadLocation(w.Timezone)
			if err != nil || lerr != nil {
				continue
			}
			if prev := c.Prev(now, loc); !prev.IsZero() && now.Before(prev.Add(w.Duration)) {
				start = prev
			} else if start = c.Next(now, loc); start.IsZero() {
				continue
			}
			end = start.Add(w.Duration)
		default:
			continue
		}
		if !end.After(now) || start.After(now.Add(upcomingHorizon)) {
			continue
		}
		r.Maintenance = append(r.Maintenance, PublicWindow{Scope: scope, StartsAt: start.UTC(), EndsAt: end.UTC(),
			Note: w.Note, Active: !now.Before(start)})
	}
	slices.SortFunc(r.Maintenance, func(a, b PublicWindow) int { return a.StartsAt.Compare(b.StartsAt) })
	if len(r.Maintenance) > maxUpcoming {
		r.Maintenance = r.Maintenance[:maxUpcoming]
	}
	return nil
}
