package web

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/service"
)

// Status pages: listed and created on one page, each edited on its own
// with its notices. The service checks them as it does for the API; the
// forms only turn what people type into a page or a notice.

// statusPageForm is a page's form as typed.
type statusPageForm struct {
	Slug        string
	Title       string
	Description string
	Tags        string  // as typed: "prod, db"
	BeetIDs     []int64 // chosen in the list
	Find        string  // lists only the beets whose name contains it (and the chosen)
}

func statusPageFormOf(p *beet.StatusPage) statusPageForm {
	return statusPageForm{Slug: p.Slug, Title: p.Title, Description: p.Description, Tags: strings.Join(p.Tags, ", "), BeetIDs: p.BeetIDs}
}

// readStatusPageForm reads the form as posted, or as its Find button sent
// it (a GET, so the beets found come with everything typed so far).
func readStatusPageForm(vals url.Values) statusPageForm {
	f := statusPageForm{Slug: strings.TrimSpace(vals.Get("slug")), Title: vals.Get("title"),
		Description: vals.Get("description"), Tags: vals.Get("tags"), Find: strings.TrimSpace(vals.Get("find"))}
	if r := []rune(f.Find); len(r) > beet.MaxNameLen { // no name holds more
		f.Find = string(r[:beet.MaxNameLen])
	}
	for _, s := range vals["beet_ids"] {
		if id, err := strconv.ParseInt(s, 10, 64); err == nil {
			f.BeetIDs = append(f.BeetIDs, id)
		}
	}
	return f
}

// found is the form its Find button sent, if it did.
func found(r *http.Request) (statusPageForm, bool) {
	q := r.URL.Query()
	return readStatusPageForm(q), q.Has("find")
}

// page turns the form into a page; tags are split as people type them.
func (f statusPageForm) page() *beet.StatusPage {
	tags := strings.FieldsFunc(f.Tags, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
	return &beet.StatusPage{Slug: f.Slug, Title: f.Title, Description: f.Description, Tags: tags, BeetIDs: f.BeetIDs}
}

type statusPageRow struct {
	*beet.StatusPage
	Shows string // in words
}

type statusPagesView struct {
	layoutView
	Page      *beet.StatusPage // nil: the template shows the list
	Pages     []statusPageRow
	F         statusPageForm
	Beets     []beetOption
	BeetsLeft int // beets the select does not list
	Done      string
	Err       *formError
}

func (v statusPagesView) Chosen(id int64) bool { return slices.Contains(v.F.BeetIDs, id) }

func (h *Handler) statusPagesView(r *http.Request, p *reqCtx, f statusPageForm, err error) (statusPagesView, error) {
	v := statusPagesView{layoutView: h.layout(r, p, "Status pages"), F: f, Done: r.URL.Query().Get("done")}
	ps, lerr := h.svc.StatusPages(r.Context(), p.session.AccountID)
	if lerr != nil {
		return v, lerr
	}
	for _, pg := range ps {
		v.Pages = append(v.Pages, statusPageRow{pg, shows(pg)})
	}
	if v.Beets, v.BeetsLeft, lerr = h.beetOptions(r, p.session.AccountID, f.Find, f.BeetIDs...); lerr != nil {
		return v, lerr
	}
	if err != nil {
		v.Err = statusPageErr(err, f)
	}
	return v, nil
}

// statusPageErr is the form's error in the form's words: the service names
// its API fields when a page would show nothing.
func statusPageErr(err error, f statusPageForm) *formError {
	e := formErr(err)
	if e.Field == "tags" && len(f.page().Tags) == 0 && len(f.BeetIDs) == 0 {
		e.Message = "name a tag here or choose a beet below: a page shows at least one"
	}
	return e
}

func shows(p *beet.StatusPage) string {
	var parts []string
	if len(p.Tags) > 0 {
		parts = append(parts, "tags "+strings.Join(p.Tags, ", "))
	}
	if n := len(p.BeetIDs); n == 1 {
		parts = append(parts, "1 chosen beet")
	} else if n > 1 {
		parts = append(parts, strconv.Itoa(n)+" chosen beets")
	}
	return strings.Join(parts, " and ")
}

func (h *Handler) statusPagesPage(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	f, _ := found(r)
	v, err := h.statusPagesView(r, p, f, nil)
	return h.renderPage(w, r, "status_pages", v, err)
}

func (h *Handler) createStatusPage(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	f := readStatusPageForm(r.PostForm)
	pg := f.page()
	err := h.svc.CreateStatusPage(r.Context(), p.session.AccountID, pg)
	return h.afterPostAs(w, r, err, statusPageURL(pg.ID, "created"), formStatus, func() (string, any, error) {
		v, verr := h.statusPagesView(r, p, f, err)
		return "status_pages", v, verr
	})
}

type statusPageView struct {
	layoutView
	Page      *beet.StatusPage
	PublicURL string
	F         statusPageForm
	Beets     []beetOption
	BeetsLeft int // beets the select does not list
	Notices   []*beet.StatusNotice
	Notice    beet.StatusNotice // the new-notice form as typed
	Done      string
	Err       *formError
	NoticeErr *formError
}

// NoticeDeleteMessage is said before a notice is deleted.
func (statusPageView) NoticeDeleteMessage() string { return noticeDeleteMessage }

func (v statusPageView) Chosen(id int64) bool { return slices.Contains(v.F.BeetIDs, id) }

// KnownIDs are the beets the stored page shows by ID, as the form posts
// them back (known_beet_ids): saving drops only those of them left
// unchosen, never one added meanwhile (through the API) that the form
// did not show.
func (v statusPageView) KnownIDs() string { return joinIDs(v.Page.BeetIDs) }

func joinIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, " ")
}

func (h *Handler) statusPageView(r *http.Request, p *reqCtx, pg *beet.StatusPage) (*statusPageView, error) {
	v := &statusPageView{layoutView: h.layout(r, p, pg.Title+" · Status page"), Page: pg, F: statusPageFormOf(pg),
		PublicURL: h.baseURL + "/status/" + pg.Slug, Done: r.URL.Query().Get("done"),
		Notice: beet.StatusNotice{Severity: beet.SeverityInfo}}
	chosen := slices.Clone(pg.BeetIDs)
	if f, ok := found(r); ok {
		v.F, chosen = f, f.BeetIDs
	}
	var err error
	if v.Beets, v.BeetsLeft, err = h.beetOptions(r, p.session.AccountID, v.F.Find, chosen...); err != nil {
		return v, err
	}
	v.Notices, err = h.svc.StatusNotices(r.Context(), p.session.AccountID, pg.ID)
	return v, err
}

// postedStatusPage finds the account's page a form was posted to and reads
// the form.
func (h *Handler) postedStatusPage(w http.ResponseWriter, r *http.Request, p *reqCtx) (*beet.StatusPage, error) {
	pg, err := byPathID(r, p, h.svc.StatusPage)
	if err != nil {
		return nil, err
	}
	return pg, parseForm(w, r)
}

func (h *Handler) statusPagePage(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	pg, err := byPathID(r, p, h.svc.StatusPage)
	if err != nil {
		return err
	}
	v, err := h.statusPageView(r, p, pg)
	return h.renderPage(w, r, "status_pages", v, err)
}

func (h *Handler) saveStatusPage(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	pg, err := h.postedStatusPage(w, r, p)
	if err != nil {
		return err
	}
	f := readStatusPageForm(r.PostForm)
	want := f.page()
	ids := append([]int64{}, want.BeetIDs...)
	// A beet the page shows by ID that the form did not know of (added
	// since it was shown) stays: only a beet unchosen in the form goes.
	known := map[int64]bool{}
	for _, s := range strings.Fields(r.PostFormValue("known_beet_ids")) {
		if id, err := strconv.ParseInt(s, 10, 64); err == nil {
			known[id] = true
		}
	}
	for _, id := range pg.BeetIDs {
		if !known[id] && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	_, err = h.svc.UpdateStatusPage(r.Context(), p.session.AccountID, pg.ID, service.StatusPageUpdate{Slug: &want.Slug,
		Title: &want.Title, Description: &want.Description, Tags: &want.Tags, BeetIDs: &ids})
	return h.afterPostAs(w, r, err, statusPageURL(pg.ID, "saved"), formStatus, h.statusPageAgain(r, p, pg, func(v *statusPageView) {
		v.F, v.Err = f, statusPageErr(err, f)
	}))
}

func (h *Handler) createStatusNotice(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	pg, err := h.postedStatusPage(w, r, p)
	if err != nil {
		return err
	}
	n := &beet.StatusNotice{Title: r.PostFormValue("title"), Body: r.PostFormValue("body"),
		Severity: service.ParseSeverity(r.PostFormValue("severity"))}
	err = h.svc.CreateStatusNotice(r.Context(), p.session.AccountID, pg.ID, n)
	return h.afterPostAs(w, r, err, statusPageURL(pg.ID, "notice")+"#notices", formStatus, h.statusPageAgain(r, p, pg, func(v *statusPageView) {
		v.Notice, v.NoticeErr = *n, formErr(err)
	}))
}

// statusPageURL is the page's settings after done happened.
func statusPageURL(id int64, done string) string {
	return "/account/status-pages/" + strconv.FormatInt(id, 10) + "?done=" + done
}

// statusPageAgain builds the status page's settings again for afterPostAs,
// with fill putting back what was typed and the error.
func (h *Handler) statusPageAgain(r *http.Request, p *reqCtx, pg *beet.StatusPage, fill func(v *statusPageView)) func() (string, any, error) {
	return showAgain("status_pages", func() (*statusPageView, error) { return h.statusPageView(r, p, pg) }, fill)
}

// pageAndNotice reads the account's status page and the notice ID from
// the path ({id} and {notice}).
func (h *Handler) pageAndNotice(r *http.Request, p *reqCtx) (*beet.StatusPage, int64, error) {
	pg, err := byPathID(r, p, h.svc.StatusPage)
	if err != nil {
		return nil, 0, err
	}
	id, err := strconv.ParseInt(r.PathValue("notice"), 10, 64)
	if err != nil || id <= 0 {
		return nil, 0, beet.Errorf(beet.ENOTFOUND, "no such notice")
	}
	return pg, id, nil
}

// noticeAction resolves, reopens or deletes a notice of the account's page.
func (h *Handler) noticeAction(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	pg, id, err := h.pageAndNotice(r, p)
	if err != nil {
		return err
	}
	acc := p.session.AccountID
	switch r.PathValue("action") {
	case "resolve", "reopen":
		resolved := r.PathValue("action") == "resolve"
		_, err = h.svc.UpdateStatusNotice(r.Context(), acc, pg.ID, id, service.NoticeUpdate{Resolved: &resolved})
	case "delete":
		err = h.svc.DeleteStatusNotice(r.Context(), acc, pg.ID, id)
	default:
		return beet.Errorf(beet.ENOTFOUND, "no such action")
	}
	if err != nil {
		return err
	}
	h.redirect(w, r, "/account/status-pages/"+strconv.FormatInt(pg.ID, 10)+"#notices")
	return nil
}

// noticeDeleteMessage is what deleting a notice does, asked before it is
// done (in a dialog, or on the confirmation page without JavaScript).
const noticeDeleteMessage = "It disappears from the public page at once, past notices included. This cannot be undone; resolve it instead to keep it among the past notices."

func (h *Handler) confirmNoticeDelete(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	pg, id, err := h.pageAndNotice(r, p)
	if err != nil {
		return err
	}
	ns, err := h.svc.StatusNotices(r.Context(), p.session.AccountID, pg.ID)
	if err != nil {
		return err
	}
	for _, n := range ns {
		if n.ID != id {
			continue
		}
		url := "/account/status-pages/" + strconv.FormatInt(pg.ID, 10)
		title := "Delete this notice?"
		h.render(w, r, http.StatusOK, "confirm", confirmView{layoutView: h.layout(r, p, title), Name: n.Title,
			Action: url + "/notices/" + strconv.FormatInt(n.ID, 10) + "/delete", Back: url + "#notices",
			Title: title, Message: noticeDeleteMessage, Button: "Delete notice"})
		return nil
	}
	return beet.Errorf(beet.ENOTFOUND, "no such notice")
}

func (h *Handler) confirmStatusPageDelete(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	pg, err := byPathID(r, p, h.svc.StatusPage)
	if err != nil {
		return err
	}
	url := "/account/status-pages/" + strconv.FormatInt(pg.ID, 10)
	h.render(w, r, http.StatusOK, "confirm", confirmView{layoutView: h.layout(r, p, "Delete this status page?"),
		Name: pg.Title + " (/status/" + pg.Slug + ")", Action: url + "/delete", Back: url,
		Title: "Delete this status page?", Message: "Its public address stops working at once and its notices are deleted. This cannot be undone.",
		Button: "Delete page"})
	return nil
}
