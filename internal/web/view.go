package web

import (
	"fmt"
	"html/template"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
	"github.com/beethq/beet/internal/schedule"
)

// layoutView is what the layout needs on every page.
type layoutView struct {
	Title    string
	SignedIn bool
	Nav      string // "beets" or "account": the current section
	Now      time.Time
	// Posted: the page answers a refused form's POST. The page's
	// canonical link then carries data-replace, and app.js puts the
	// page's own address in the address bar (the POST's has no page).
	Posted bool
}

func (h *Handler) layout(r *http.Request, p *reqCtx, title string) layoutView {
	v := layoutView{Title: title, Now: h.svc.Now(), Posted: r.Method == http.MethodPost}
	if p != nil && p.session != nil {
		v.SignedIn = true
	}
	switch {
	case strings.HasPrefix(r.URL.Path, "/account"):
		v.Nav = "account"
	case r.URL.Path == "/" || strings.HasPrefix(r.URL.Path, "/beets"):
		v.Nav = "beets"
	}
	return v
}

// formError is a form's failure shown above it, with the field at fault.
type formError struct {
	Message string
	Field   string
}

func formErr(err error) *formError {
	return &formError{Message: beet.ErrorMessage(err), Field: beet.ErrorField(err)}
}

// afterPost ends a form's POST as every form here does: a validation
// error shows the form again (422) as again builds it, with the fields as
// typed and the error in place; any other error goes to the error page;
// success redirects to next.
func (h *Handler) afterPost(w http.ResponseWriter, r *http.Request, err error, next string, again func() (page string, v any, err error)) error {
	return h.afterPostAs(w, r, err, next, validationStatus, again)
}

// renderPage renders page with v, or returns err, the error building v.
func (h *Handler) renderPage(w http.ResponseWriter, r *http.Request, page string, v any, err error) error {
	if err != nil {
		return err
	}
	h.render(w, r, http.StatusOK, page, v)
	return nil
}

// afterPostAs is afterPost where statusOf picks the errors that show the
// form again, with the status it answers (0: the error page).
func (h *Handler) afterPostAs(w http.ResponseWriter, r *http.Request, err error, next string, statusOf func(error) int, again func() (page string, v any, err error)) error {
	if err == nil {
		h.redirect(w, r, next)
		return nil
	}
	status := statusOf(err)
	if status == 0 {
		return err
	}
	page, v, verr := again()
	if verr != nil {
		return verr
	}
	h.render(w, r, status, page, v)
	return nil
}

// showAgain is afterPost's again for a page whose view build makes and
// fill completes with what was typed and the error.
func showAgain[V any](page string, build func() (V, error), fill func(V)) func() (string, any, error) {
	return func() (string, any, error) {
		v, err := build()
		if err != nil {
			return "", nil, err
		}
		fill(v)
		return page, v, nil
	}
}

// validationStatus shows only invalid input again.
func validationStatus(err error) int {
	if beet.ErrorCode(err) == beet.EVALIDATION {
		return http.StatusUnprocessableEntity
	}
	return 0
}

// formStatus is the status of a form refused for err, or 0 when err is
// not the person's to fix (it goes to h.fail): invalid input, a conflict,
// a reference to something that is not there, or too many tries (said in
// the form, beside what was typed).
func formStatus(err error) int {
	switch code := beet.ErrorCode(err); {
	case code == beet.EVALIDATION:
		return http.StatusUnprocessableEntity
	case code == beet.ECONFLICT:
		return http.StatusConflict
	case code == beet.ENOTFOUND && beet.ErrorField(err) != "":
		return http.StatusUnprocessableEntity
	case code == beet.ERATELIMITED:
		return http.StatusTooManyRequests
	}
	return 0
}

func (h *Handler) funcs() template.FuncMap {
	return template.FuncMap{
		"asset": func(name string) string { return h.prefix + "/static/" + name + "?v=" + h.assetHash[name] },
		// root is the base URL's path, written before every absolute link.
		"root": func() string { return h.prefix },
		"ago":  ago,
		"inZone": func(t time.Time, tz string) string {
			loc, err := time.LoadLocation(tz)
			if err != nil {
				loc = time.UTC
			}
			return t.In(loc).Format("2006-01-02 15:04:05 MST")
		},
		"utc":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"signal":   signalWords,
		"clip":     clip,
		"statusOf": statusWords,
		"value": func(v *float64) string {
			if v == nil {
				return "—"
			}
			return strconv.FormatFloat(*v, 'g', -1, 64)
		},
		"minutes": func(s int64) string {
			if s == 0 {
				return ""
			}
			return strconv.FormatFloat(float64(s)/60, 'g', -1, 64)
		},
		"dur": func(s int64) string { return detect.Duration(time.Duration(s) * time.Second) },
		"isField": func(e *formError, field string) bool {
			return e != nil && (e.Field == field || strings.HasPrefix(e.Field, field+"."))
		},
		// offFields is whether e is an error on none of a form's fields,
		// shown above the form rather than under one.
		"offFields": func(e *formError, fields ...string) bool {
			return e != nil && !slices.Contains(fields, e.Field)
		},
		// fieldMsg is the error to show next to field, or "".
		"fieldMsg": func(e *formError, field string) string {
			if e != nil && e.Field == field {
				return e.Message
			}
			return ""
		},
	}
}

// ago writes how long before now t was, for people: "just now", "3 min
// ago", "2 h ago", "5 days ago".
func ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < 0:
		return "in " + detect.Duration(-d)
	case d < 10*time.Second:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%d s ago", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d/time.Hour))
	default:
		return fmt.Sprintf("%d days ago", int(d/(24*time.Hour)))
	}
}

// statusWords says a status in words; the colour is a CSS class of the
// same name, and never the only sign.
func statusWords(s beet.Status) string {
	switch s {
	case beet.StatusNew:
		return "New"
	case beet.StatusLearning:
		return "Learning"
	case beet.StatusUp:
		return "Up"
	case beet.StatusDown:
		return "Down"
	case beet.StatusAnomalous:
		return "Anomalous"
	case beet.StatusPaused:
		return "Paused"
	}
	return string(s)
}

// sparkline draws counts as an SVG polyline's points in a 96 × 24 box,
// tallest bucket at the top; all zero is a flat line at the bottom.
func sparkline(counts []int64) string {
	if len(counts) == 0 {
		return ""
	}
	peak := int64(0)
	for _, c := range counts {
		peak = max(peak, c)
	}
	var b strings.Builder
	stepX := 96.0 / math.Max(1, float64(len(counts)-1))
	for i, c := range counts {
		y := 23.0
		if peak > 0 {
			y = 23 - 21*float64(c)/float64(peak)
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.1f,%.1f", float64(i)*stepX, y)
	}
	return b.String()
}

// mask hides all of a token but its prefix and last four characters.
func mask(token string) string {
	if len(token) <= len(beet.TokenPrefix)+4 {
		return token
	}
	return token[:len(beet.TokenPrefix)] + strings.Repeat("•", len(token)-len(beet.TokenPrefix)-4) + token[len(token)-4:]
}

// snippet is one copy-paste way to send events.
type snippet struct {
	ID, Tab, Title, Help string
	Text, Masked         string
}

// snippets are the ways to call the ingestion URL, each shown masked and
// copied whole; the cron line runs on the beet's own schedule.
func snippets(url, token string, d beet.Detection) []snippet {
	masked := strings.ReplaceAll(url, token, mask(token))
	mk := func(id, title, help, tmpl string) snippet {
		tab, _, _ := strings.Cut(title, " (")
		return snippet{ID: id, Tab: tab, Title: title, Help: help,
			Text: strings.ReplaceAll(tmpl, "URL", url), Masked: strings.ReplaceAll(tmpl, "URL", masked)}
	}
	cron, when, crontab := cronLine(d)
	cronTitle := "cron line"
	if !crontab {
		cronTitle = "after the job (shell)"
	}
	return []snippet{
		mk("img", "Image beacon (HTML)", "Paste it into the page that proves the event happened, such as an order confirmation.",
			`<img src="URL" alt="" width="1" height="1" referrerpolicy="no-referrer">`),
		mk("fetch", "fetch POST with a value (JavaScript)", "Sends a number with the event, such as an order total.",
			`fetch("URL", {method: "POST", body: JSON.stringify({value: 5}), keepalive: true});`),
		mk("beacon", "navigator.sendBeacon (JavaScript)", "Survives the page being closed, for events on the way out.",
			`navigator.sendBeacon("URL");`),
		mk("curl", "curl (shell)", "From a script or a terminal.",
			`curl -fsS -o /dev/null -X POST -d '{"value": 1}' "URL"`),
		mk("cron", cronTitle, "Records a run after your job succeeds; "+when+".",
			cronJob(cron)),
		mk("wrapper", "Job wrapper (shell)", "Reports the start, then the exit code: a failure turns the beet down at once, and the run's duration is recorded.",
			wrapperSnippet),
	}
}

// cronJob is a crontab line (or, after a comment line, a shell line) that
// runs a job and then records the run.
func cronJob(line string) string {
	if strings.HasSuffix(line, "\n") {
		return line + `/path/to/job && curl -fsS -m 10 --retry 3 -o /dev/null "URL"`
	}
	return line + ` /path/to/job && curl -fsS -m 10 --retry 3 -o /dev/null "URL"`
}

// startSnippets are the three lines a new beet's page shows whole, each
// with its own copy button: a shell call, an image beacon, a crontab line
// (on the beet's own schedule when it has one).
func startSnippets(url, token string, d beet.Detection) []snippet {
	masked := strings.ReplaceAll(url, token, mask(token))
	mk := func(id, title, tmpl string) snippet {
		return snippet{ID: id, Tab: title, Title: title,
			Text: strings.ReplaceAll(tmpl, "URL", url), Masked: strings.ReplaceAll(tmpl, "URL", masked)}
	}
	cron, _, crontab := cronLine(d)
	cronTitle := "crontab, after a job"
	if !crontab {
		cronTitle = "after the job (shell)"
	}
	return []snippet{
		mk("curl", "curl", `curl -fsS -m 10 --retry 3 -o /dev/null "URL"`),
		mk("img", "<img> in a page", `<img src="URL" alt="" width="1" height="1" referrerpolicy="no-referrer">`),
		mk("crontab", cronTitle, cronJob(cron)),
	}
}

// cronLine is the crontab schedule that keeps a beet with detection d up,
// and when it runs, in words. Every line is one Debian's cron (Vixie cron)
// runs: a cron beet's own line, headed by a comment naming its zone when
// that is not UTC (Debian's cron ignores CRON_TZ= and reads the line on the
// machine's clock); a period beet's most spread-out schedule that still
// runs at least once a period; in auto mode, Beet learns whatever rhythm the
// job has, so the line is an example. A cron beet whose schedule uses Beet's
// extensions (L, W, #) has no crontab line: the lines say to run the call
// after the job instead.
func cronLine(d beet.Detection) (line, when string, crontab bool) {
	switch d.Mode {
	case beet.ModeCron:
		if !schedule.Crontab(d.Cron) {
			return "# Beet's schedule " + d.Cron + " is not crontab syntax: run this after each run of the job\n",
				"the beet's schedule `" + d.Cron + "` is for Beet's schedule field, not a crontab (L, W and # are Beet's own), so run the line after each run of the job", false
		}
		if d.Timezone != "" && d.Timezone != "UTC" {
			return "# in " + d.Timezone + " time: cron reads the line on the machine's clock\n" + d.Cron,
				"on the beet's schedule, in " + d.Timezone + " time (the machine's clock must be in that zone)", true
		}
		return d.Cron, "on the beet's schedule", true
	case beet.ModePeriod:
		line, when = periodCron(time.Duration(d.PeriodSeconds) * time.Second)
		return line, when, true
	}
	return "0 2 * * *", "here, every day at 02:00 (Beet learns whatever rhythm your job has)", true
}

// periodCron is the least frequent common cron schedule that runs at least
// once every period.
func periodCron(period time.Duration) (line, when string) {
	switch {
	case period >= 7*24*time.Hour:
		return "0 2 * * 1", "every Monday at 02:00, within the beet's period"
	case period >= 24*time.Hour:
		return "0 2 * * *", "every day at 02:00, within the beet's period"
	}
	for _, h := range []int{12, 8, 6, 4, 3, 2, 1} {
		if period >= time.Duration(h)*time.Hour {
			if h == 1 {
				return "0 * * * *", "every hour, within the beet's period"
			}
			return fmt.Sprintf("0 */%d * * *", h), fmt.Sprintf("every %d hours, within the beet's period", h)
		}
	}
	for _, m := range []int{30, 20, 15, 12, 10, 6, 5, 4, 3, 2} {
		if period >= time.Duration(m)*time.Minute {
			return fmt.Sprintf("*/%d * * * *", m), fmt.Sprintf("every %d minutes, within the beet's period", m)
		}
	}
	return "* * * * *", "every minute"
}

// Detection form fields, in minutes for people.
func parseMinutes(field, s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) || f > 366*24*60 {
		name := map[string]string{"detection.period_seconds": "Period (minutes)", "detection.grace_seconds": "Grace (minutes)"}[field]
		if name == "" {
			name = field
		}
		return 0, beet.FieldError(field, "%s: %q is not a number of minutes", name, s)
	}
	return int64(math.Round(f * 60)), nil
}
