package web

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
	"github.com/beethq/beet/internal/service"
)

// listPage is how many beets one page of the list shows.
const listPage = 100

type beetRow struct {
	*beet.Beet
	Spark  string // SVG polyline points of the last 24 h, per hour
	Total  int64  // events in the last 24 h
	Rhythm string // the schedule, or the learned rhythm, in words
}

type listView struct {
	layoutView
	Rows     []beetRow
	Total    int
	Q        string
	Status   string
	Statuses []beet.Status
	Tag      string
	Tags     []string // every tag of the account, for the filter
	Sort     string
	Sorts    []sortChoice
	Offset   int
	PrevURL  string
	FirstURL string // the list's first page with the same filters
	NextURL  string
	Filtered bool
	Query    string // the filters as a query string, for the bulk form's way back
	Notice   string
	// Unknown says that requests with unknown tokens came lately (nil:
	// none the viewer should hear of).
	Unknown *unknownBanner
}

type sortChoice struct{ Value, Label string }

var sortChoices = []sortChoice{{"", "Oldest first"}, {"status", "Worst status first"}, {"name", "Name"}, {"last_event", "Longest silent first"}, {"tag", "By tag"}}

func (h *Handler) beetList(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	q := r.URL.Query()
	v := listView{layoutView: h.layout(r, p, "Beets"), Q: strings.TrimSpace(q.Get("q")), Status: q.Get("status"), Statuses: beet.Statuses,
		Tag: strings.ToLower(strings.TrimSpace(q.Get("tag"))), Sort: q.Get("sort"), Sorts: sortChoices}
	f := beet.BeetFilter{Limit: listPage, Tag: v.Tag, Order: beet.BeetOrder(v.Sort)}
	if v.Status != "" {
		st := beet.Status(v.Status)
		if !st.Valid() {
			return beet.FieldError("status", "unknown status %q", v.Status)
		}
		f.Status = &st
	}
	if !f.Order.Valid() {
		return beet.FieldError("sort", "unknown order %q", v.Sort)
	}
	if v.Tag != "" {
		if err := beet.ValidateTag("tag", v.Tag); err != nil {
			return err
		}
	}
	v.Offset, _ = strconv.Atoi(q.Get("offset"))
	f.Offset = max(v.Offset, 0)
	v.Filtered = v.Q != "" || v.Status != "" || v.Tag != ""
	ctx := r.Context()
	beets, total, err := h.svc.SearchBeets(ctx, p.session.AccountID, f, v.Q)
	if err != nil {
		return err
	}
	if err := h.svc.FillTags(ctx, beets...); err != nil {
		return err
	}
	if v.Tags, err = h.svc.AccountTags(ctx, p.session.AccountID); err != nil {
		return err
	}
	v.Total = total
	if v.Unknown, err = h.unknownBannerFor(ctx, p.session.AccountID); err != nil {
		return err
	}
	// One query counts the page's last 24 hours, per hour, for sparklines.
	now := h.svc.Now()
	b := beet.Buckets{From: now.Truncate(time.Hour).Add(-23 * time.Hour), Step: time.Hour, N: 24}
	counts, err := h.svc.EventCounts(ctx, beets, b)
	if err != nil {
		return err
	}
	for _, x := range beets {
		c := counts[x.ID]
		if c == nil {
			c = make([]int64, b.N)
		}
		row := beetRow{Beet: x, Spark: sparkline(c), Rhythm: rhythm(x)}
		for _, n := range c {
			row.Total += n
		}
		v.Rows = append(v.Rows, row)
	}
	page := func(off int) string {
		u := url.Values{}
		for k, val := range map[string]string{"q": v.Q, "status": v.Status, "tag": v.Tag, "sort": v.Sort} {
			if val != "" {
				u.Set(k, val)
			}
		}
		if off > 0 {
			u.Set("offset", strconv.Itoa(off))
		}
		if len(u) == 0 {
			return "/"
		}
		return "/?" + u.Encode()
	}
	v.Query = strings.TrimPrefix(strings.TrimPrefix(page(f.Offset), "/"), "?")
	v.FirstURL = page(0)
	if f.Offset > 0 {
		v.PrevURL = page(max(0, f.Offset-listPage))
	}
	if f.Offset+len(beets) < total {
		v.NextURL = page(f.Offset + listPage)
	}
	if n, err := strconv.Atoi(q.Get("n")); err == nil {
		switch q.Get("done") {
		case "paused":
			v.Notice = plural(n, "beet") + " paused: their events are recorded, no alerts are raised."
		case "resumed":
			v.Notice = plural(n, "beet") + " resumed."
		}
		if n == 0 {
			v.Notice = "No beet was checked: check the beets to pause or resume first."
		}
	}
	h.render(w, r, http.StatusOK, "beets", v)
	return nil
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// maxBulk bounds one bulk action: a page of the list.
const maxBulk = listPage

// bulk pauses or resumes the beets checked in the list, each through the
// same service call as its own page (so each is scoped to the account and
// writes its own flip), then returns to the list as it was filtered.
func (h *Handler) bulk(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	act := map[string]func(ctx context.Context, accountID, id int64) (*beet.Beet, error){
		"pause": h.svc.Pause, "resume": h.svc.Resume}[r.PostFormValue("action")]
	if act == nil {
		return beet.FieldError("action", "must be pause or resume")
	}
	ids := r.PostForm["id"]
	if len(ids) > maxBulk {
		return beet.FieldError("id", "at most %d beets at once", maxBulk)
	}
	for _, s := range ids {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= 0 {
			return beet.Errorf(beet.ENOTFOUND, "no such beet")
		}
		if _, err := act(r.Context(), p.session.AccountID, id); err != nil {
			return err
		}
	}
	back, _ := url.ParseQuery(r.PostFormValue("back"))
	back.Del("done")
	back.Del("n")
	back.Set("done", r.PostFormValue("action")+"d") // "paused", "resumed"
	back.Set("n", strconv.Itoa(len(ids)))
	h.redirect(w, r, "/?"+back.Encode())
	return nil
}

// rhythm says in a few words what the beet expects: its schedule, its
// period, or what auto mode has learned.
func rhythm(b *beet.Beet) string {
	switch b.Detection.Mode {
	case beet.ModePeriod:
		return "every " + detect.Exact(time.Duration(b.Detection.PeriodSeconds)*time.Second)
	case beet.ModeCron:
		e := detect.Expectation(b)
		if s, ok := strings.CutPrefix(e, "Expects a run "); ok {
			if i := strings.Index(s, ";"); i > 0 {
				return s[:i]
			}
		}
		return b.Detection.Cron
	}
	if b.Status == beet.StatusNew {
		return "auto: waiting for the first event"
	}
	if s, ok := strings.CutPrefix(detect.Expectation(b), "Learned: "); ok {
		return strings.TrimSuffix(s, ".")
	}
	return "auto: learning the rhythm"
}

type newBeetView struct {
	layoutView
	Welcome     bool
	Name        string
	Description string
	Timezone    string
	Det         detectionForm
	Timezones   []string
	Err         *formError
}

func (h *Handler) newBeetForm(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	acc, err := h.svc.Account(r.Context(), p.session.AccountID)
	if err != nil {
		return err
	}
	h.render(w, r, http.StatusOK, "beet_new", newBeetView{layoutView: h.layout(r, p, "New beet"),
		Welcome: r.URL.Query().Get("welcome") == "1", Timezone: acc.Timezone, Det: detectionForm{Mode: string(beet.ModeAuto)},
		Timezones: commonZones})
	return nil
}

// newBeetInput reads the new-beet form, or its preview's query: the
// schedule fields are the beet page's detection form's, in minutes.
func newBeetInput(vals url.Values) (service.BeetInput, detectionForm, error) {
	in := service.BeetInput{Name: vals.Get("name"), Description: vals.Get("description"), Timezone: strings.TrimSpace(vals.Get("timezone"))}
	form := detectionFormOf(nil, vals)
	if form.Mode == "" {
		form.Mode = string(beet.ModeAuto)
	}
	form = form.withZone(in.Timezone)
	d, err := form.detection()
	if form.Mode == string(beet.ModeCron) && strings.TrimSpace(form.Timezone) == "" && beet.ErrorField(err) == "detection.timezone" {
		err = nil // no zone at all: the service gives it the account's
	}
	in.Detection = &d
	return in, form, err
}

func (h *Handler) createBeet(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	in, form, err := newBeetInput(r.PostForm)
	var b *beet.Beet
	if err == nil {
		b, err = h.svc.CreateBeet(r.Context(), p.session.AccountID, in)
	}
	if beet.ErrorCode(err) == beet.EVALIDATION {
		h.render(w, r, http.StatusUnprocessableEntity, "beet_new", newBeetView{layoutView: h.layout(r, p, "New beet"),
			Name: in.Name, Description: in.Description, Timezone: in.Timezone, Det: form, Timezones: commonZones, Err: formErr(err)})
		return nil
	} else if err != nil {
		return err
	}
	h.redirect(w, r, "/beets/"+strconv.FormatInt(b.ID, 10)+"?created=1")
	return nil
}

// previewJSON is the new-beet form's schedule preview: what the beet would
// expect and its next expected times, or the field at fault and why, in
// the words the form would show on submit.
type previewJSON struct {
	Expects string   `json:"expects,omitempty"`
	Label   string   `json:"label,omitempty"`
	Next    []string `json:"next,omitempty"`
	Field   string   `json:"field,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// previewTimes is how many expected times the preview lists.
const previewTimes = 3

func (h *Handler) schedulePreview(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	in, _, err := newBeetInput(r.URL.Query())
	var pv *service.SchedulePreview
	if err == nil {
		pv, err = h.svc.PreviewSchedule(r.Context(), p.session.AccountID, in, previewTimes)
	}
	var out previewJSON
	switch {
	case beet.ErrorCode(err) == beet.EVALIDATION:
		out.Field, out.Error = beet.ErrorField(err), beet.ErrorMessage(err)
	case err != nil:
		return err
	default:
		out.Expects = pv.Expects
		loc, lerr := time.LoadLocation(pv.Zone)
		if lerr != nil {
			loc = time.UTC
		}
		if len(pv.Next) > 0 {
			out.Label = "Next runs, in " + pv.Zone + ":"
			if pv.FromNow {
				out.Label = "If an event came now, the next ones would be due by, in " + pv.Zone + ":"
			}
		}
		for _, t := range pv.Next {
			out.Next = append(out.Next, t.In(loc).Format("Mon Jan 2, 15:04 MST"))
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	return json.NewEncoder(w).Encode(out)
}

// detailView is the beet page.
type detailView struct {
	layoutView
	B           *beet.Beet
	URL         string
	MaskedURL   string
	MaskedToken string
	Snippets    []snippet
	Events      []*beet.Event
	Problems    []*beet.Problem
	Flips       []*beet.Flip
	OldTokens   []string // hits with rotated tokens, in words
	Expectation string
	Headline    string // under the status: the latest flip's reason, or what an up auto beet expects now
	Reliable    string // when alerts can be trusted, in words
	Watch       *watchView
	Created     bool
	Rotated     bool
	Revealed    bool // the token shown whole: just rotated, or Reveal followed without script
	// Fresh is a beet that never had an event: its page is the URL and
	// the Start lines, with no chart and no empty tables.
	Fresh       bool
	Start       []snippet
	Det         detectionForm
	Settings    settingsForm // the settings form's fields: the stored ones, or as typed after an error
	SettingsErr *formError
	DetErr      *formError
	Backtest    *service.BacktestResult
	Timezones   []string
	Channels    []channelRow   // the account's channels
	ChannelOn   map[int64]bool // those this beet notifies
	Tags        string         // as the tags field shows them
	TagsErr     *formError
	BadgeURL    string
	BadgePath   string // the image's source (see badgePath)
	Day24       int64  // events in the last 24 hours
	DayOne      string // for a beet that is not armed yet: what it has and what it waits for
}

// settingsForm is the settings form's fields. After a refused post they
// hold what was typed, while the rest of the page (headings, times, the
// chart's zone) keeps showing the beet as stored.
type settingsForm struct {
	Name, Description, Timezone string
	AllowBots, ResumeOnEvent    bool
}

// detectionForm is the detection settings as the form shows them.
type detectionForm struct {
	Mode          string
	PeriodMinutes string
	GraceMinutes  string
	Cron          string
	Timezone      string
	// RuntimeMinutes is max_runtime_seconds, in any mode.
	RuntimeMinutes string
}

func formOf(d beet.Detection) detectionForm {
	f := detectionForm{Mode: string(d.Mode), Cron: d.Cron, Timezone: d.Timezone, RuntimeMinutes: runtimeMinutes(d.MaxRuntimeSeconds)}
	if d.PeriodSeconds > 0 {
		f.PeriodMinutes = strconv.FormatFloat(float64(d.PeriodSeconds)/60, 'g', -1, 64)
	}
	if d.GraceSeconds > 0 || d.Mode != beet.ModeAuto {
		f.GraceMinutes = strconv.FormatFloat(float64(d.GraceSeconds)/60, 'g', -1, 64)
	}
	return f
}

// withZone is f with zone as a cron schedule's when the form left it
// empty: a schedule runs in its beet's zone unless told.
func (f detectionForm) withZone(zone string) detectionForm {
	if f.Mode == string(beet.ModeCron) && strings.TrimSpace(f.Timezone) == "" {
		f.Timezone = zone
	}
	return f
}

// detection reads the form into settings, or says which field is wrong.
func (f detectionForm) detection() (beet.Detection, error) {
	d := beet.Detection{Mode: beet.DetectionMode(f.Mode)}
	var err error
	if d.MaxRuntimeSeconds, err = parseMinutes("detection.max_runtime_seconds", f.RuntimeMinutes); err != nil {
		return d, err
	}
	switch d.Mode {
	case beet.ModePeriod:
		if d.PeriodSeconds, err = parseMinutes("detection.period_seconds", f.PeriodMinutes); err != nil {
			return d, err
		}
		if d.GraceSeconds, err = parseMinutes("detection.grace_seconds", f.GraceMinutes); err != nil {
			return d, err
		}
	case beet.ModeCron:
		d.Cron, d.Timezone = strings.TrimSpace(f.Cron), strings.TrimSpace(f.Timezone)
		if d.GraceSeconds, err = parseMinutes("detection.grace_seconds", f.GraceMinutes); err != nil {
			return d, err
		}
	}
	return d, inFormUnits(d.Validate())
}

// inFormUnits restates the domain's limits, which are in seconds (the
// API's unit), in the form's words and minutes: "Period (minutes) must be
// from 1 to 525600", not "must be from 60 to 31536000".
func inFormUnits(err error) error {
	switch f := beet.ErrorField(err); f {
	case "detection.period_seconds":
		return beet.FieldError(f, "Period (minutes) must be from %d to %d", int64(beet.MinPeriod/time.Minute), int64(beet.MaxPeriod/time.Minute))
	case "detection.grace_seconds":
		return beet.FieldError(f, "Grace (minutes) must be from 0 to %d", int64(beet.MaxGrace/time.Minute))
	case "detection.cron":
		return beet.FieldError(f, "Cron expression %s", beet.ErrorMessage(err))
	case "detection.timezone":
		return beet.FieldError(f, "Schedule time zone: %s", beet.ErrorMessage(err))
	}
	return err
}

func detectionFormOf(r *http.Request, vals url.Values) detectionForm {
	return detectionForm{Mode: vals.Get("mode"), PeriodMinutes: vals.Get("period_minutes"), GraceMinutes: vals.Get("grace_minutes"),
		Cron: vals.Get("cron"), Timezone: vals.Get("cron_timezone"), RuntimeMinutes: vals.Get("runtime_minutes")}
}

// Sizes of the tables on the beet page.
const (
	detailEvents   = 50
	detailProblems = 20
	detailFlips    = 20
)

func (h *Handler) detail(r *http.Request, p *reqCtx) (*detailView, error) {
	b, err := byPathID(r, p, h.svc.Beet)
	if err != nil {
		return nil, err
	}
	ctx, acc, id := r.Context(), p.session.AccountID, b.ID
	v := &detailView{layoutView: h.layout(r, p, b.Name), B: b, Det: formOf(b.Detection), Timezones: commonZones,
		Settings: settingsForm{Name: b.Name, Description: b.Description, Timezone: b.Timezone, AllowBots: b.AllowBots, ResumeOnEvent: b.ResumeOnEvent}}
	v.URL = h.baseURL + "/api/v1/beet/" + b.Token
	v.MaskedToken = mask(b.Token)
	v.MaskedURL = h.baseURL + "/api/v1/beet/" + v.MaskedToken
	v.Snippets = snippets(v.URL, b.Token, b.Detection)
	if v.Events, err = h.svc.Events(ctx, acc, beet.EventFilter{BeetID: id, Limit: detailEvents}); err != nil {
		return nil, err
	}
	if v.Fresh = b.LastEventAt == nil && len(v.Events) == 0; v.Fresh {
		v.Start = startSnippets(v.URL, b.Token, b.Detection)
	}
	if v.Problems, err = h.svc.Problems(ctx, acc, id, detailProblems); err != nil {
		return nil, err
	}
	if v.Flips, err = h.svc.Flips(ctx, acc, beet.FlipFilter{BeetID: id, Limit: detailFlips}); err != nil {
		return nil, err
	}
	v.Expectation = detect.Expectation(b)
	if b.Detection.Mode == beet.ModeAuto && (b.Status == beet.StatusNew || b.Status == beet.StatusLearning) {
		// When alerts start is said once, under Reliable alerts.
		v.Expectation = "Learning this beet's rhythm: when events come, and how many."
		if b.Status == beet.StatusNew {
			v.Expectation = "Its first event; then auto mode learns this beet's rhythm: when events come, and how many."
		}
	}
	if runs := detect.RunExpectation(b); runs != "" {
		v.Expectation += " " + runs
	}
	v.Headline = b.StatusReason
	if b.Detection.Mode == beet.ModeAuto && b.Status == beet.StatusUp {
		// The model moves on after the flip that made it up (a young
		// schedule's days become known, a rule grows fourfold): the
		// headline says what it expects now; the flip stays in the history.
		v.Headline = v.Expectation
	}
	olds, err := h.svc.RotatedTokens(ctx, acc, id, 0)
	if err != nil {
		return nil, err
	}
	for _, t := range olds {
		if t.Hits > 0 {
			v.OldTokens = append(v.OldTokens, oldTokenLine(t, b.Timezone))
		}
	}
	loc, err := time.LoadLocation(b.Timezone)
	if err != nil {
		loc = time.UTC
	}
	v.Reliable = reliable(b, h.svc.Now(), loc)
	v.Watch = watchViewOf(b)
	if err := h.svc.FillTags(ctx, b); err != nil {
		return nil, err
	}
	v.Tags = strings.Join(b.Tags, ", ")
	badges, _, err := h.svc.BadgeIDs(ctx, acc, []int64{b.ID}, nil)
	if err != nil {
		return nil, err
	}
	v.BadgeURL, v.BadgePath = h.badgeURL(badges[b.ID]), h.badgePath(badges[b.ID])
	now := h.svc.Now()
	counts, err := h.svc.BeetEventCounts(ctx, acc, id, beet.Buckets{From: now.Add(-24 * time.Hour), Step: 24 * time.Hour, N: 1})
	if err != nil {
		return nil, err
	}
	v.Day24 = counts[0]
	v.DayOne = dayOne(b, v.Day24, now, loc)
	chans, err := h.svc.Channels(ctx, acc)
	if err != nil {
		return nil, err
	}
	v.Channels, v.ChannelOn = channelsOf(chans), map[int64]bool{}
	for _, id := range b.Channels {
		v.ChannelOn[id] = true
	}
	return v, nil
}

// reliable says from when the beet's alerts can be trusted. For auto mode
// it is decided by what the model watches (detect.Watch), whatever the
// status: a learning beet the guard flagged is still learning.
func reliable(b *beet.Beet, now time.Time, loc *time.Location) string {
	switch {
	case b.Status == beet.StatusPaused:
		return "Paused: no alerts until it is resumed."
	case b.Detection.Mode != beet.ModeAuto:
		if b.LastEventAt == nil {
			return "From the first event: the settings say what to expect."
		}
		return "Now: the settings say what to expect."
	}
	if full, watched, ok := learningWords(b, now, loc); ok {
		return full + ". " + watched
	}
	return "Now: the rhythm is learned."
}

// learningWords is the one statement of when a learning auto beet's full
// alerts start and what is watched meanwhile, built from detect.Watch
// (and detect.ArmingRule before there is a model), with no date that has
// passed. ok is false once the model is armed.
func learningWords(b *beet.Beet, now time.Time, loc *time.Location) (full, watched string, ok bool) {
	rule := detect.ArmingRule
	meanwhile := "M" + strings.TrimPrefix(rule.Meanwhile(), "m") + "."
	w, known := detect.Watch(b)
	switch {
	case known && w.ArmedAt != nil, known && w.Model != detect.WatchLearning, !known && b.Status != beet.StatusNew && b.Status != beet.StatusLearning:
		return "", "", false
	case !known:
		return "Full alerts start " + rule.Words(), meanwhile, true
	}
	full = w.FullAlerts(now, loc)
	switch {
	case b.Status.InTrouble():
		watched = "Still learning: the learning guard flagged this silence."
	case w.AlertAfter > 0:
		watched = "Watched meanwhile: a silence over " + detect.Duration(w.AlertAfter) + " after the last event, and a job from its first runs."
	default:
		watched = meanwhile
	}
	return full, watched, true
}

// dayOne says, for a learning beet, what it has seen so far and when its
// full alerts start, in the words Reliable alerts uses, so the first days
// show something. A new beet's page says it with the URL.
func dayOne(b *beet.Beet, day int64, now time.Time, loc *time.Location) string {
	if b.Status != beet.StatusLearning || b.Detection.Mode != beet.ModeAuto {
		return ""
	}
	msg := plural(int(day), "event") + " in the last 24 hours. Auto mode is learning when events come and how many"
	if full, _, ok := learningWords(b, now, loc); ok {
		msg += "; " + strings.ToLower(full[:1]) + full[1:]
	}
	return msg + ". To alert at once, set a period or a schedule under Detection."
}

func (h *Handler) saveTags(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	id, err := postedID(w, r)
	if err != nil {
		return err
	}
	_, err = h.svc.SetBeetTags(r.Context(), p.session.AccountID, id, r.PostFormValue("tags"))
	return h.afterPost(w, r, err, beetURL(id)+"#settings", h.beetPageAgain(r, p, func(v *detailView) {
		v.Tags, v.TagsErr = r.PostFormValue("tags"), formErr(err)
	}))
}

// beetPageAgain builds the beet page to show again after a form on it
// failed validation: fill puts back what was typed and the error.
func (h *Handler) beetPageAgain(r *http.Request, p *reqCtx, fill func(v *detailView)) func() (string, any, error) {
	return showAgain("beet", func() (*detailView, error) { return h.detail(r, p) }, fill)
}

func (h *Handler) beetPage(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	v, err := h.detail(r, p)
	if err == nil {
		q := r.URL.Query()
		v.Created, v.Rotated = q.Get("created") == "1", h.takeFlash(w, r, beetURL(v.B.ID)) == "rotated"
		v.Revealed = v.Rotated || q.Get("reveal") == "1" // the Reveal link, without script
	}
	return h.renderPage(w, r, "beet", v, err)
}

// confirmView asks before a destructive action: Action is the form's
// URL, Back the page to return to.
type confirmView struct {
	layoutView
	Name    string
	Action  string
	Back    string
	Title   string
	Message string
	Button  string
}

// confirmations are the actions that ask first. With JavaScript, the
// beet page asks in a dialog; this page is the same question without it.
var confirmations = map[string][3]string{
	"rotate": {"Rotate the token?", "The current URL stops recording at once. Every page, job and snippet that uses it must get the new one.", "Rotate token"},
	"delete": {"Delete this beet?", "The beet, its events, problems and history are deleted. This cannot be undone.", "Delete beet"},
}

func (h *Handler) confirmPage(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	c, ok := confirmations[r.PathValue("action")]
	if !ok {
		return beet.Errorf(beet.ENOTFOUND, "no such action")
	}
	b, err := h.svc.Beet(r.Context(), p.session.AccountID, id)
	if err != nil {
		return err
	}
	h.render(w, r, http.StatusOK, "confirm", confirmView{layoutView: h.layout(r, p, c[0]), Name: b.Name,
		Action: beetURL(b.ID) + "/" + r.PathValue("action"), Back: beetURL(b.ID), Title: c[0], Message: c[1], Button: c[2]})
	return nil
}

func beetURL(id int64) string { return "/beets/" + strconv.FormatInt(id, 10) }

func (h *Handler) rotate(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if _, err := h.svc.RotateToken(r.Context(), p.session.AccountID, id); err != nil {
		return err
	}
	// The page after says so once: a flash, not ?rotated=1, which a
	// reload, a bookmark or the self-refresh would keep announcing.
	h.setFlash(w, r, beetURL(id), "rotated")
	h.redirect(w, r, beetURL(id)+"#send")
	return nil
}

func (h *Handler) saveSettings(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	id, err := postedID(w, r)
	if err != nil {
		return err
	}
	name, desc, tz := r.PostFormValue("name"), r.PostFormValue("description"), strings.TrimSpace(r.PostFormValue("timezone"))
	bots, resume := r.PostFormValue("allow_bots") == "on", r.PostFormValue("resume_on_event") == "on"
	upd := beet.BeetUpdate{Name: &name, Description: &desc, Timezone: &tz, AllowBots: &bots, ResumeOnEvent: &resume}
	_, err = h.svc.UpdateBeet(r.Context(), p.session.AccountID, id, upd)
	return h.afterPost(w, r, err, beetURL(id)+"#settings", h.beetPageAgain(r, p, func(v *detailView) {
		v.Settings = settingsForm{Name: name, Description: desc, Timezone: tz, AllowBots: bots, ResumeOnEvent: resume}
		v.SettingsErr = formErr(err)
	}))
}

func (h *Handler) saveDetection(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	id, err := postedID(w, r)
	if err != nil {
		return err
	}
	form := detectionFormOf(r, r.PostForm)
	b, err := h.svc.Beet(r.Context(), p.session.AccountID, id)
	if err != nil {
		return err
	}
	d, err := form.withZone(b.Timezone).detection()
	if err == nil {
		_, err = h.svc.UpdateBeet(r.Context(), p.session.AccountID, id, beet.BeetUpdate{Detection: &d})
	}
	return h.afterPost(w, r, err, beetURL(id)+"#detection", h.beetPageAgain(r, p, func(v *detailView) {
		v.Det, v.DetErr = form, formErr(err)
	}))
}

// backtest shows the beet page with the alerts the form's settings would
// have raised over the last 30 days; nothing is saved.
func (h *Handler) backtest(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	v, err := h.detail(r, p)
	if err != nil {
		return err
	}
	v.Det = detectionFormOf(r, r.URL.Query())
	d, err := v.Det.withZone(v.B.Timezone).detection()
	if err == nil {
		v.Backtest, err = h.svc.Backtest(r.Context(), p.session.AccountID, v.B.ID, d)
	}
	if beet.ErrorCode(err) == beet.EVALIDATION {
		v.DetErr = formErr(err)
		h.render(w, r, http.StatusUnprocessableEntity, "beet", v)
		return nil
	} else if err != nil {
		return err
	}
	h.render(w, r, http.StatusOK, "beet", v)
	return nil
}

// byPathID finds the session account's beet, channel or status page by the
// path's {id}, through find (one of the service's getters).
func byPathID[T any](r *http.Request, p *reqCtx, find func(ctx context.Context, accountID, id int64) (T, error)) (T, error) {
	id, err := pathID(r)
	if err != nil {
		var none T
		return none, err
	}
	return find(r.Context(), p.session.AccountID, id)
}

// postedID reads the form posted to a page of {id}, and the {id}.
func postedID(w http.ResponseWriter, r *http.Request) (int64, error) {
	if err := parseForm(w, r); err != nil {
		return 0, err
	}
	return pathID(r)
}

// pathID reads {id}; anything but a positive number is not found, as in
// the API.
func pathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, beet.Errorf(beet.ENOTFOUND, "no such beet")
	}
	return id, nil
}

// commonZones are offered in the time zone fields' suggestions; any IANA
// name is accepted.
var commonZones = []string{"UTC", "Europe/London", "Europe/Berlin", "Europe/Paris", "Europe/Riga", "Europe/Helsinki",
	"America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles", "America/Sao_Paulo",
	"Asia/Tokyo", "Asia/Singapore", "Asia/Kolkata", "Asia/Shanghai", "Australia/Sydney", "Africa/Johannesburg"}

// watchView is what auto mode watches a beet for, as the beet page shows
// it, with the learned schedule ready to become an explicit cron beet.
type watchView struct {
	Description   string
	ArmedAt       string // empty while learning
	ArmsBy        string // while learning
	AlertAfter    string // how long after the last event a stop is flagged
	SuggestedZone string
	Cron          string
	Timezone      string
	GraceMinutes  string
}

func watchViewOf(b *beet.Beet) *watchView {
	w, ok := detect.Watch(b)
	if !ok {
		return nil
	}
	loc, err := time.LoadLocation(b.Timezone)
	if err != nil {
		loc = time.UTC
	}
	v := &watchView{Description: w.Description, SuggestedZone: w.SuggestedZone, Cron: w.Cron, Timezone: w.Timezone,
		GraceMinutes: strconv.FormatFloat(math.Ceil(float64(w.GraceSeconds)/60), 'g', -1, 64)}
	if b.Status == beet.StatusPaused {
		return v // no alerts while paused: nothing to say about when they start
	}
	if w.ArmedAt != nil {
		v.ArmedAt = w.ArmedAt.In(loc).Format("Jan 2 15:04 MST")
	}
	if w.ArmsBy != nil {
		v.ArmsBy = w.ArmsBy.In(loc).Format("Jan 2 15:04 MST")
	}
	if w.AlertAfter > 0 {
		v.AlertAfter = detect.Duration(w.AlertAfter)
	}
	return v
}
