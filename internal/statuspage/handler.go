// Package statuspage serves the public status pages: {base}/status/{slug}
// as HTML that needs no script, {slug}.json and {slug}.rss. Anyone may
// read them, so they carry only what the service's public report holds
// (names, states, times, notices), never a token or an ID. Answers are
// cacheable: a short max-age and an ETag that changes only with the page.
package statuspage

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/service"
)

//go:embed page.html
var pageHTML string

//go:embed page.css
var pageCSS string

// Handler serves the public status pages.
type Handler struct {
	svc     *service.Service
	log     *slog.Logger
	baseURL string // absolute, without a trailing slash, for the feed's links
	prefix  string // its path ("/beet"), before every link the page writes
	page    *template.Template
	css     string
	csp     string

	mu    sync.Mutex
	pages map[string]*renderedPage // by slug and format (rendered)
}

// New returns the status pages' handler. baseURL is Beet's public URL.
func New(svc *service.Service, log *slog.Logger, baseURL string) (*Handler, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{svc: svc, log: log.With("component", "statuspage"), baseURL: strings.TrimRight(baseURL, "/")}
	if u, err := url.Parse(h.baseURL); err == nil {
		h.prefix = strings.TrimRight(u.EscapedPath(), "/")
	}
	h.css = pageCSS + barWidths()
	sum := sha256.Sum256([]byte(h.css))
	// The page's only style is the inline one, allowed by its hash; no
	// script, no frames, no forms. The icon is empty (data:), so a
	// browser asks for no favicon.
	h.csp = "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; img-src 'self' data:; " +
		"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	t, err := template.New("page").Funcs(funcs).Parse(pageHTML)
	if err != nil {
		return nil, err
	}
	h.page = t
	return h, nil
}

// Register mounts the pages on mux.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /status/{file}", h.serve)
}

// barWidths is the CSS of the history bars' runs: a run of n equal days
// is one element of class nN that grows n times and draws n bars, so a
// quiet beet's 90 days are one element.
func barWidths() string {
	var b strings.Builder
	for n := 1; n <= beet.StatusHistoryDays; n++ {
		fmt.Fprintf(&b, ".n%d{--n:%d;flex:%d 1 0}", n, n, n)
	}
	return b.String()
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	slug, format := r.PathValue("file"), "html"
	for _, ext := range []string{"json", "rss"} {
		if s, ok := strings.CutSuffix(slug, "."+ext); ok {
			slug, format = s, ext
		}
	}
	hd := w.Header()
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	rep, err := h.svc.PublicStatus(r.Context(), slug)
	if err != nil {
		status, msg := http.StatusInternalServerError, "This status page is unavailable right now."
		if beet.IsNotFound(err) {
			status, msg = http.StatusNotFound, "There is no status page here."
		} else {
			h.log.ErrorContext(r.Context(), "status page failed", "err", err)
		}
		hd.Set("Cache-Control", "no-store")
		if format == "json" {
			code := map[int]string{404: beet.ENOTFOUND, 500: beet.EINTERNAL}[status]
			writeJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
			return
		}
		hd.Set("Content-Security-Policy", "default-src 'none'")
		hd.Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		w.Write([]byte(msg + "\n"))
		return
	}
	// Weak: the same report in the same format is the same page, though
	// its "updated" time moved.
	etag := `W/"` + rep.Version + "-" + format + `"`
	hd.Set("ETag", etag)
	hd.Set("Cache-Control", "public, max-age="+strconv.Itoa(int(service.ReportTTL/time.Second)))
	hd.Set("Vary", "Accept-Encoding")
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	switch format {
	case "json":
		hd.Set("Content-Type", "application/json")
		hd.Set("Access-Control-Allow-Origin", "*") // public data: widgets on other sites may read it
	case "rss":
		hd.Set("Content-Type", "application/rss+xml; charset=utf-8")
	default:
		hd.Set("Content-Type", "text/html; charset=utf-8")
		hd.Set("Content-Security-Policy", h.csp)
		hd.Set("X-Frame-Options", "DENY")
	}
	page, err := h.rendered(rep, format)
	if err != nil {
		h.log.ErrorContext(r.Context(), "rendering a status page failed", "format", format, "err", err)
		hd.Del("ETag")
		hd.Set("Cache-Control", "no-store")
		http.Error(w, "This status page is unavailable right now.", http.StatusInternalServerError)
		return
	}
	body := page.body
	if acceptsGzip(r) {
		body = page.gz
		hd.Set("Content-Encoding", "gzip")
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// acceptsGzip reports whether the request's Accept-Encoding allows gzip
// (and does not refuse it with q=0).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			q := strings.ReplaceAll(params, " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

// renderedPage is one report in one format, plain and gzipped.
type renderedPage struct {
	rep      *service.StatusReport
	body, gz []byte
}

// maxRendered bounds the rendered pages kept; past it the cache starts
// over.
const maxRendered = 3000

// rendered returns the report in format, rendering and compressing it
// only when the service built a new report: every other request for the
// page is a copy of bytes.
func (h *Handler) rendered(rep *service.StatusReport, format string) (*renderedPage, error) {
	key := rep.Slug + "." + format
	h.mu.Lock()
	if p := h.pages[key]; p != nil && p.rep == rep {
		h.mu.Unlock()
		return p, nil
	}
	h.mu.Unlock()
	var (
		body []byte
		err  error
	)
	switch format {
	case "json":
		body, err = json.Marshal(rep)
		body = append(body, '\n')
	case "rss":
		body, err = h.feed(rep)
	default:
		body, err = h.html(rep)
	}
	if err != nil {
		return nil, err
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	zw.Write(body)
	if err := zw.Close(); err != nil {
		return nil, err
	}
	p := &renderedPage{rep: rep, body: body, gz: gz.Bytes()}
	h.mu.Lock()
	if h.pages == nil || len(h.pages) >= maxRendered {
		h.pages = map[string]*renderedPage{}
	}
	h.pages[key] = p
	h.mu.Unlock()
	return p, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"internal","message":"internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// pageView is the template's data.
type pageView struct {
	R     *service.StatusReport
	Base  string // this page's path without a suffix
	CSS   template.CSS
	Open  []service.PublicNotice
	Past  []service.PublicNotice
	Shown int
}

func (h *Handler) html(rep *service.StatusReport) ([]byte, error) {
	v := pageView{R: rep, Base: h.prefix + "/status/" + rep.Slug, CSS: template.CSS(h.css), Shown: beet.MaxStatusPageBeets}
	for _, n := range rep.Notices {
		if n.Resolved {
			v.Past = append(v.Past, n)
		} else {
			v.Open = append(v.Open, n)
		}
	}
	var buf bytes.Buffer
	if err := h.page.Execute(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var levelWords = map[service.DayLevel]string{
	service.DayUp: "no trouble", service.DayDown: "down for a while", service.DayDegraded: "degraded for a while",
	service.DayNone: "no data",
}

// bars writes a beet's days as runs: a stretch of equal days is one
// element of class nN (N days), titled with its dates. Written here rather
// than by the template, which took most of a 1,000-beet page's render.
// Levels and dates are fixed words and digits: nothing to escape.
func bars(days []service.DayLevel, dates []string) template.HTML {
	var b strings.Builder
	b.Grow(64 * 4)
	for i := 0; i < len(days); {
		j := i
		for j < len(days) && days[j] == days[i] {
			j++
		}
		b.WriteString(`<i class="d-`)
		b.WriteString(string(days[i]))
		b.WriteString(" n")
		b.WriteString(strconv.Itoa(j - i))
		b.WriteString(`" title="`)
		b.WriteString(dates[i])
		if j-1 > i {
			b.WriteString(" to ")
			b.WriteString(dates[j-1])
		}
		b.WriteString(": ")
		b.WriteString(levelWords[days[i]])
		b.WriteString(`"></i>`)
		i = j
	}
	return template.HTML(b.String())
}

var funcs = template.FuncMap{
	"bars": bars,
	"iso":  func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"when": func(t time.Time) string { return t.UTC().Format("2 Jan 2006 15:04 UTC") },
	"state": func(s beet.Status) string {
		return map[beet.Status]string{beet.StatusUp: "Operational", beet.StatusLearning: "Operational",
			beet.StatusDown: "Down", beet.StatusAnomalous: "Degraded", beet.StatusNew: "No data yet",
			beet.StatusPaused: "Paused"}[s]
	},
	"overall": overallWords,
	"severity": func(s beet.NoticeSeverity) string {
		return map[beet.NoticeSeverity]string{beet.SeverityInfo: "Info", beet.SeverityMinor: "Minor",
			beet.SeverityMajor: "Major"}[s]
	},
	"uptime": func(p *float64) string {
		if p == nil {
			return "no data"
		}
		return strconv.FormatFloat(*p, 'f', -1, 64) + "% up"
	},
}

func overallWords(o service.Overall) string {
	return map[service.Overall]string{service.OverallOperational: "All systems operational",
		service.OverallDegraded: "Degraded performance", service.OverallMaintenance: "Under maintenance",
		service.OverallPartial: "Partial outage", service.OverallMajor: "Major outage"}[o]
}

// downNames lists the first few beets that are down, for the feed's
// description: "; down: Invoice run, Checkout API".
func downNames(rep *service.StatusReport) string {
	var names []string
	for _, sec := range rep.Sections {
		for _, b := range sec.Beets {
			if b.Status == beet.StatusDown && len(names) < 10 && !slices.Contains(names, b.Name) {
				names = append(names, b.Name)
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "; down: " + strings.Join(names, ", ")
}

// feed is the page as RSS 2.0: the notices, newest first, and an open
// global incident, each item a stable guid.
func (h *Handler) feed(rep *service.StatusReport) ([]byte, error) {
	link := h.baseURL + "/status/" + rep.Slug
	type guid struct {
		Value     string `xml:",chardata"`
		Permalink bool   `xml:"isPermaLink,attr"`
	}
	type item struct {
		Title       string `xml:"title"`
		Link        string `xml:"link"`
		Description string `xml:"description,omitempty"`
		PubDate     string `xml:"pubDate"`
		GUID        guid   `xml:"guid"`
	}
	type channel struct {
		Title         string `xml:"title"`
		Link          string `xml:"link"`
		Description   string `xml:"description"`
		LastBuildDate string `xml:"lastBuildDate"`
		TTL           int    `xml:"ttl"`
		Items         []item `xml:"item"`
	}
	// A description is HTML to feed readers (RSS 2.0: "entity-encoded
	// HTML"), so text goes in escaped as HTML as well as XML: a notice's
	// "<img onerror>" is shown, not run.
	ch := channel{Title: rep.Title + " status", Link: link, Description: html.EscapeString(overallWords(rep.Overall) + downNames(rep)),
		LastBuildDate: rep.BuiltAt.UTC().Format(time.RFC1123Z), TTL: 1}
	if inc := rep.Incident; inc != nil {
		ch.Items = append(ch.Items, item{Title: "Monitoring delayed: Beet has trouble receiving events", Link: link,
			PubDate: inc.StartedAt.UTC().Format(time.RFC1123Z),
			GUID:    guid{Value: link + "#incident-" + strconv.FormatInt(inc.StartedAt.Unix(), 10)}})
	}
	for _, n := range rep.Notices {
		title := "[" + strings.ToUpper(string(n.Severity)) + "] " + n.Title
		if n.Resolved {
			title = "[RESOLVED] " + n.Title
		}
		anchor := link + "#notice-" + strconv.Itoa(n.Number)
		ch.Items = append(ch.Items, item{Title: title, Link: anchor, Description: html.EscapeString(n.Body),
			PubDate: n.UpdatedAt.UTC().Format(time.RFC1123Z), GUID: guid{Value: anchor + "-" + strconv.FormatInt(n.UpdatedAt.UnixMicro(), 10)}})
	}
	out, err := xml.MarshalIndent(struct {
		XMLName xml.Name `xml:"rss"`
		Version string   `xml:"version,attr"`
		Channel channel  `xml:"channel"`
	}{Version: "2.0", Channel: ch}, "", " ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}
