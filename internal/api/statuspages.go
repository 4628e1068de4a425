package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/service"
)

// Status pages (docs/STATUS-PAGES.md): the account manages them here; the
// public page itself is internal/statuspage.

type statusPageJSON struct {
	ID          int64     `json:"id"`
	Slug        string    `json:"slug"`
	Title       string    `json:"title"`
	Description string    `json:"description"`
	Tags        []string  `json:"tags"`
	BeetIDs     []int64   `json:"beet_ids"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func toStatusPageJSON(p *beet.StatusPage) statusPageJSON {
	return statusPageJSON{ID: p.ID, Slug: p.Slug, Title: p.Title, Description: p.Description, Tags: p.Tags,
		BeetIDs: p.BeetIDs, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

type statusPageRequest struct {
	Slug        *string   `json:"slug"`
	Title       *string   `json:"title"`
	Description *string   `json:"description"`
	Tags        *[]string `json:"tags"`
	BeetIDs     *[]int64  `json:"beet_ids"`
}

func (q statusPageRequest) update() service.StatusPageUpdate {
	return service.StatusPageUpdate{Slug: q.Slug, Title: q.Title, Description: q.Description, Tags: q.Tags, BeetIDs: q.BeetIDs}
}

func (h *Handler) createStatusPage(w http.ResponseWriter, r *http.Request, accountID int64) error {
	return createResource(w, r, func(req statusPageRequest) (*beet.StatusPage, error) {
		p := &beet.StatusPage{Slug: deref(req.Slug), Title: deref(req.Title), Description: deref(req.Description),
			Tags: deref(req.Tags), BeetIDs: deref(req.BeetIDs)}
		return p, h.svc.CreateStatusPage(r.Context(), accountID, p)
	}, func(p *beet.StatusPage) string { return "/api/v1/status-pages/" + itoa(p.ID) }, toStatusPageJSON)
}

func (h *Handler) updateStatusPage(w http.ResponseWriter, r *http.Request, accountID int64) error {
	return updateResource(w, r, idOf("status page"), func(id int64, req statusPageRequest) (*beet.StatusPage, error) {
		return h.svc.UpdateStatusPage(r.Context(), accountID, id, req.update())
	}, toStatusPageJSON)
}

type noticeJSON struct {
	ID         int64               `json:"id"`
	Number     int                 `json:"number"`
	Title      string              `json:"title"`
	Body       string              `json:"body"`
	Severity   beet.NoticeSeverity `json:"severity"`
	Resolved   bool                `json:"resolved"`
	ResolvedAt *time.Time          `json:"resolved_at,omitempty"`
	CreatedAt  time.Time           `json:"created_at"`
	UpdatedAt  time.Time           `json:"updated_at"`
}

func toNoticeJSON(n *beet.StatusNotice) noticeJSON {
	return noticeJSON{ID: n.ID, Number: n.Number, Title: n.Title, Body: n.Body, Severity: n.Severity,
		Resolved: n.Resolved != nil, ResolvedAt: n.Resolved, CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt}
}

type noticeRequest struct {
	Title    *string              `json:"title"`
	Body     *string              `json:"body"`
	Severity *beet.NoticeSeverity `json:"severity"`
	Resolved *bool                `json:"resolved"`
}

// noticeID reads {notice} as a notice ID.
func noticeID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("notice"), 10, 64)
	if err != nil || id <= 0 {
		return 0, beet.Errorf(beet.ENOTFOUND, "notice %q not found", beet.RedactPath(r.PathValue("notice")))
	}
	return id, nil
}

func (h *Handler) createNotice(w http.ResponseWriter, r *http.Request, accountID int64) error {
	pageID, err := channelID(r, "status page")
	if err != nil {
		return err
	}
	return createResource(w, r, func(req noticeRequest) (*beet.StatusNotice, error) {
		if req.Resolved != nil && *req.Resolved {
			return nil, beet.FieldError("resolved", "a new notice is open; resolve it with PATCH")
		}
		n := &beet.StatusNotice{Title: deref(req.Title), Body: deref(req.Body), Severity: deref(req.Severity)}
		return n, h.svc.CreateStatusNotice(r.Context(), accountID, pageID, n)
	}, func(n *beet.StatusNotice) string {
		return "/api/v1/status-pages/" + itoa(pageID) + "/notices/" + itoa(n.ID)
	}, toNoticeJSON)
}

func (h *Handler) listNotices(w http.ResponseWriter, r *http.Request, accountID int64) error {
	pageID, err := channelID(r, "status page")
	if err != nil {
		return err
	}
	ns, err := h.svc.StatusNotices(r.Context(), accountID, pageID)
	return writeList(w, "notices", ns, err, toNoticeJSON)
}

func (h *Handler) updateNotice(w http.ResponseWriter, r *http.Request, accountID int64) error {
	pageID, err := channelID(r, "status page")
	if err != nil {
		return err
	}
	return updateResource(w, r, noticeID, func(id int64, req noticeRequest) (*beet.StatusNotice, error) {
		return h.svc.UpdateStatusNotice(r.Context(), accountID, pageID, id,
			service.NoticeUpdate{Title: req.Title, Body: req.Body, Severity: req.Severity, Resolved: req.Resolved})
	}, toNoticeJSON)
}

func (h *Handler) deleteNotice(w http.ResponseWriter, r *http.Request, accountID int64) error {
	pageID, err := channelID(r, "status page")
	if err != nil {
		return err
	}
	return deleteResource(w, r, noticeID, func(id int64) error {
		return h.svc.DeleteStatusNotice(r.Context(), accountID, pageID, id)
	})
}
