package service

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/beethq/beet"
)

// Status pages: an account manages them here (API and dashboard), and
// anyone reads their public report (statusreport.go).

// StatusPageUpdate holds the fields of a page to change; nil means keep.
type StatusPageUpdate struct {
	Slug        *string
	Title       *string
	Description *string
	Tags        *[]string
	BeetIDs     *[]int64
}

// NoticeUpdate holds the fields of a notice to change; nil means keep.
type NoticeUpdate struct {
	Title    *string
	Body     *string
	Severity *beet.NoticeSeverity
	Resolved *bool
}

// CreateStatusPage adds a page to the account. Its beet IDs must be the
// account's beets.
func (s *Service) CreateStatusPage(ctx context.Context, accountID int64, p *beet.StatusPage) error {
	p.AccountID = accountID
	p.CreatedAt, p.UpdatedAt = s.Now(), s.Now()
	if err := s.checkStatusPage(ctx, p); err != nil {
		return err
	}
	pages, err := s.store.FindStatusPages(ctx, accountID)
	if err != nil {
		return err
	}
	if len(pages) >= beet.MaxStatusPagesPerAcct {
		return beet.Errorf(beet.ECONFLICT, "an account has at most %d status pages", beet.MaxStatusPagesPerAcct)
	}
	if err := s.store.CreateStatusPage(ctx, p); err != nil {
		return err
	}
	s.reports.forget(p.Slug)
	return nil
}

// checkStatusPage validates p and refuses beet IDs that are not beets of
// its account, naming the first (another account's beet is as missing as
// one that does not exist).
func (s *Service) checkStatusPage(ctx context.Context, p *beet.StatusPage) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if len(p.BeetIDs) == 0 {
		return nil
	}
	found, err := s.store.FindStatusPageBeets(ctx, p.AccountID, nil, p.BeetIDs, beet.MaxStatusPageBeetIDs)
	if err != nil {
		return err
	}
	mine := make(map[int64]bool, len(found))
	for _, b := range found {
		mine[b.ID] = true
	}
	for _, id := range p.BeetIDs {
		if !mine[id] {
			return &beet.Error{Code: beet.ENOTFOUND, Field: "beet_ids", Message: "beet " + strconv.FormatInt(id, 10) + " not found"}
		}
	}
	return nil
}

// pruneBeetIDs drops the IDs of beets deleted since the page named them,
// so a change that does not touch beet_ids is not refused for them.
func (s *Service) pruneBeetIDs(ctx context.Context, p *beet.StatusPage) error {
	if len(p.BeetIDs) == 0 {
		return nil
	}
	found, err := s.store.FindStatusPageBeets(ctx, p.AccountID, nil, p.BeetIDs, beet.MaxStatusPageBeetIDs)
	if err != nil {
		return err
	}
	live := make(map[int64]bool, len(found))
	for _, b := range found {
		live[b.ID] = true
	}
	p.BeetIDs = slices.DeleteFunc(p.BeetIDs, func(id int64) bool { return !live[id] })
	return nil
}

// StatusPages lists the account's pages, oldest first.
func (s *Service) StatusPages(ctx context.Context, accountID int64) ([]*beet.StatusPage, error) {
	return s.store.FindStatusPages(ctx, accountID)
}

// StatusPage returns the account's page; another account's page is not
// found, as one that does not exist.
func (s *Service) StatusPage(ctx context.Context, accountID, id int64) (*beet.StatusPage, error) {
	p, err := s.store.FindStatusPageByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if p.AccountID != accountID {
		return nil, beet.Errorf(beet.ENOTFOUND, "status page %d not found", id)
	}
	return p, nil
}

// UpdateStatusPage changes the fields set in upd and validates the page
// as a whole before anything is written.
func (s *Service) UpdateStatusPage(ctx context.Context, accountID, id int64, upd StatusPageUpdate) (*beet.StatusPage, error) {
	p, err := s.StatusPage(ctx, accountID, id)
	if err != nil {
		return nil, err
	}
	oldSlug := p.Slug
	if upd.Slug != nil {
		p.Slug = *upd.Slug
	}
	if upd.Title != nil {
		p.Title = *upd.Title
	}
	if upd.Description != nil {
		p.Description = *upd.Description
	}
	if upd.Tags != nil {
		p.Tags = *upd.Tags
	}
	if upd.BeetIDs != nil {
		p.BeetIDs = *upd.BeetIDs
	} else if err := s.pruneBeetIDs(ctx, p); err != nil {
		return nil, err
	}
	if err := s.checkStatusPage(ctx, p); err != nil {
		return nil, err
	}
	p.UpdatedAt = s.Now()
	if err := s.store.UpdateStatusPage(ctx, p); err != nil {
		return nil, err
	}
	s.reports.forget(oldSlug)
	s.reports.forget(p.Slug)
	return p, nil
}

// DeleteStatusPage removes the account's page with its notices.
func (s *Service) DeleteStatusPage(ctx context.Context, accountID, id int64) error {
	p, err := s.StatusPage(ctx, accountID, id)
	if err != nil {
		return err
	}
	if err := s.store.DeleteStatusPage(ctx, id); err != nil {
		return err
	}
	s.reports.forget(p.Slug)
	return nil
}

// CreateStatusNotice adds a notice to the account's page.
func (s *Service) CreateStatusNotice(ctx context.Context, accountID, pageID int64, n *beet.StatusNotice) error {
	p, err := s.StatusPage(ctx, accountID, pageID)
	if err != nil {
		return err
	}
	if n.Severity == "" {
		n.Severity = beet.SeverityInfo
	}
	if err := n.Validate(); err != nil {
		return err
	}
	ns, err := s.store.FindStatusNotices(ctx, pageID, beet.MaxNoticesPerPage+1)
	if err != nil {
		return err
	}
	if len(ns) >= beet.MaxNoticesPerPage {
		return beet.Errorf(beet.ECONFLICT, "a page has at most %d notices; delete old ones first", beet.MaxNoticesPerPage)
	}
	n.PageID = pageID
	n.CreatedAt, n.UpdatedAt = s.Now(), s.Now()
	if err := s.store.CreateStatusNotice(ctx, n); err != nil {
		return err
	}
	s.reports.forget(p.Slug)
	return nil
}

// StatusNotices lists the page's notices, newest first.
func (s *Service) StatusNotices(ctx context.Context, accountID, pageID int64) ([]*beet.StatusNotice, error) {
	if _, err := s.StatusPage(ctx, accountID, pageID); err != nil {
		return nil, err
	}
	return s.store.FindStatusNotices(ctx, pageID, beet.MaxNoticesPerPage)
}

// statusNotice finds the notice on the account's page, or not found.
func (s *Service) statusNotice(ctx context.Context, accountID, pageID, id int64) (*beet.StatusPage, *beet.StatusNotice, error) {
	p, err := s.StatusPage(ctx, accountID, pageID)
	if err != nil {
		return nil, nil, err
	}
	n, err := s.store.FindStatusNoticeByID(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if n.PageID != pageID {
		return nil, nil, beet.Errorf(beet.ENOTFOUND, "notice %d not found", id)
	}
	return p, n, nil
}

// UpdateStatusNotice changes the fields set in upd; resolving stamps the
// time, reopening clears it.
func (s *Service) UpdateStatusNotice(ctx context.Context, accountID, pageID, id int64, upd NoticeUpdate) (*beet.StatusNotice, error) {
	p, n, err := s.statusNotice(ctx, accountID, pageID, id)
	if err != nil {
		return nil, err
	}
	if upd.Title != nil {
		n.Title = *upd.Title
	}
	if upd.Body != nil {
		n.Body = *upd.Body
	}
	if upd.Severity != nil {
		n.Severity = *upd.Severity
	}
	if upd.Resolved != nil {
		switch {
		case *upd.Resolved && n.Resolved == nil:
			now := s.Now()
			n.Resolved = &now
		case !*upd.Resolved:
			n.Resolved = nil
		}
	}
	if err := n.Validate(); err != nil {
		return nil, err
	}
	n.UpdatedAt = s.Now()
	if err := s.store.UpdateStatusNotice(ctx, n); err != nil {
		return nil, err
	}
	s.reports.forget(p.Slug)
	return n, nil
}

// DeleteStatusNotice removes the notice from the account's page.
func (s *Service) DeleteStatusNotice(ctx context.Context, accountID, pageID, id int64) error {
	p, _, err := s.statusNotice(ctx, accountID, pageID, id)
	if err != nil {
		return err
	}
	if err := s.store.DeleteStatusNotice(ctx, id); err != nil {
		return err
	}
	s.reports.forget(p.Slug)
	return nil
}

// ParseSeverity reads a severity as typed; "" is info.
func ParseSeverity(s string) beet.NoticeSeverity {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return beet.SeverityInfo
	}
	return beet.NoticeSeverity(s)
}
