package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/httpx"
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
	var req statusPageRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	p := &beet.StatusPage{}
	if req.Slug != nil {
		p.Slug = *req.Slug
	}
	if req.Title != nil {
		p.Title = *req.Title
	}
	if req.Description != nil {
		p.Description = *req.Description
	}
	if req.Tags != nil {
		p.Tags = *req.Tags
	}
	if req.BeetIDs != nil {
		p.BeetIDs = *req.BeetIDs
	}
	if err := h.svc.CreateStatusPage(r.Context(), accountID, p); err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/status-pages/"+itoa(p.ID))
	httpx.WriteJSON(w, http.StatusCreated, toStatusPageJSON(p))
	return nil
}

func (h *Handler) listStatusPages(w http.ResponseWriter, r *http.Request, accountID int64) error {
	ps, err := h.svc.StatusPages(r.Context(), accountID)
	if err != nil {
		return err
	}
	out := struct {
		StatusPages []statusPageJSON `json:"status_pages"`
	}{make([]statusPageJSON, 0, len(ps))}
	for _, p := range ps {
		out.StatusPages = append(out.StatusPages, toStatusPageJSON(p))
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) getStatusPage(w http.ResponseWriter, r *http.Request, accountID int64) error {
	id, err := channelID(r, "status page")
	if err != nil {
		return err
	}
	p, err := h.svc.StatusPage(r.Context(), accountID, id)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, toStatusPageJSON(p))
	return nil
}

func (h *Handler) updateStatusPage(w http.ResponseWriter, r *http.Request, accountID int64) error {
	id, err := channelID(r, "status page")
	if err != nil {
		return err
	}
	var req statusPageRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	p, err := h.svc.UpdateStatusPage(r.Context(), accountID, id, req.update())
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, toStatusPageJSON(p))
	return nil
}

func (h *Handler) deleteStatusPage(w http.ResponseWriter, r *http.Request, accountID int64) error {
	id, err := channelID(r, "status page")
	if err != nil {
		return err
	}
	if err := h.svc.DeleteStatusPage(r.Context(), accountID, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
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
	var req noticeRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	n := &beet.StatusNotice{}
	if req.Title != nil {
		n.Title = *req.Title
	}
	if req.Body != nil {
		n.Body = *req.Body
	}
	if req.Severity != nil {
		n.Severity = *req.Severity
	}
	if req.Resolved != nil && *req.Resolved {
		return beet.FieldError("resolved", "a new notice is open; resolve it with PATCH")
	}
	if err := h.svc.CreateStatusNotice(r.Context(), accountID, pageID, n); err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/status-pages/"+itoa(pageID)+"/notices/"+itoa(n.ID))
	httpx.WriteJSON(w, http.StatusCreated, toNoticeJSON(n))
	return nil
}

func (h *Handler) listNotices(w http.ResponseWriter, r *http.Request, accountID int64) error {
	pageID, err := channelID(r, "status page")
	if err != nil {
		return err
	}
	ns, err := h.svc.StatusNotices(r.Context(), accountID, pageID)
	if err != nil {
		return err
	}
	out := struct {
		Notices []noticeJSON `json:"notices"`
	}{make([]noticeJSON, 0, len(ns))}
	for _, n := range ns {
		out.Notices = append(out.Notices, toNoticeJSON(n))
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) updateNotice(w http.ResponseWriter, r *http.Request, accountID int64) error {
	pageID, err := channelID(r, "status page")
	if err != nil {
		return err
	}
	id, err := noticeID(r)
	if err != nil {
		return err
	}
	var req noticeRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	n, err := h.svc.UpdateStatusNotice(r.Context(), accountID, pageID, id,
		service.NoticeUpdate{Title: req.Title, Body: req.Body, Severity: req.Severity, Resolved: req.Resolved})
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, toNoticeJSON(n))
	return nil
}

func (h *Handler) deleteNotice(w http.ResponseWriter, r *http.Request, accountID int64) error {
	pageID, err := channelID(r, "status page")
	if err != nil {
		return err
	}
	id, err := noticeID(r)
	if err != nil {
		return err
	}
	if err := h.svc.DeleteStatusNotice(r.Context(), accountID, pageID, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
