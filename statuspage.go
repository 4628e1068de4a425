package beet

import (
	"context"
	"strings"
	"time"
)

// StatusPage is a public, read-only page of an account's beets, at
// {base}/status/{Slug}: the beets that carry one of Tags, and those named
// in BeetIDs. Anyone with the URL reads it, so it shows names and states
// only, never tokens or IDs.
type StatusPage struct {
	ID          int64
	AccountID   int64
	Slug        string
	Title       string
	Description string
	Tags        []string // one section per tag, in this order
	BeetIDs     []int64  // beets shown whatever their tags
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Limits on status pages and their notices; every size has one.
const (
	MinSlugLen            = 3
	MaxSlugLen            = 40
	MaxStatusTitleLen     = 100
	MaxStatusPageTags     = 20
	MaxStatusPageBeetIDs  = 1000
	MaxStatusPagesPerAcct = 20
	// MaxStatusPageBeets bounds the beets one page shows, however many
	// match its tags, so it stays cheap to build.
	MaxStatusPageBeets   = 1000
	MaxNoticeTitleLen    = 200
	MaxNoticeBodyLen     = 5000
	MaxNoticesPerPage    = 100
	StatusHistoryDays    = 90
	maxStatusDescription = MaxDescriptionLen
)

// Validate checks a page's fields and cleans its tags.
func (p *StatusPage) Validate() error {
	if err := ValidateSlug(p.Slug); err != nil {
		return err
	}
	if err := ValidateText("title", p.Title, MaxStatusTitleLen, TextRequired); err != nil {
		return err
	}
	if err := ValidateText("description", p.Description, maxStatusDescription, TextLines); err != nil {
		return err
	}
	if len(p.Tags) > MaxStatusPageTags {
		return FieldError("tags", "has %d tags; at most %d are allowed", len(p.Tags), MaxStatusPageTags)
	}
	seen := map[string]bool{}
	tags := make([]string, 0, len(p.Tags))
	for _, t := range p.Tags {
		t = strings.ToLower(t)
		if err := ValidateTag("tags", t); err != nil {
			return err
		}
		if !seen[t] {
			seen[t] = true
			tags = append(tags, t)
		}
	}
	p.Tags = tags
	if len(p.BeetIDs) > MaxStatusPageBeetIDs {
		return FieldError("beet_ids", "has %d beets; at most %d are allowed", len(p.BeetIDs), MaxStatusPageBeetIDs)
	}
	ids := make([]int64, 0, len(p.BeetIDs))
	seenID := map[int64]bool{}
	for _, id := range p.BeetIDs {
		if id <= 0 {
			return FieldError("beet_ids", "%d is not a beet ID", id)
		}
		if !seenID[id] {
			seenID[id] = true
			ids = append(ids, id)
		}
	}
	p.BeetIDs = ids
	if len(p.Tags) == 0 && len(p.BeetIDs) == 0 {
		return FieldError("tags", "a page shows the beets of at least one tag or beet (tags or beet_ids)")
	}
	return nil
}

// ValidateSlug checks a page's slug: 3 to 40 characters a-z, 0-9 and '-',
// starting and ending with a letter or digit, so it is a clean URL path
// segment that never holds a '.' (which would clash with .json and .rss).
func ValidateSlug(s string) error {
	if len(s) < MinSlugLen || len(s) > MaxSlugLen {
		return FieldError("slug", "is %d to %d characters long", MinSlugLen, MaxSlugLen)
	}
	for i, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' && i > 0 && i < len(s)-1
		if !ok {
			return FieldError("slug", "%q may hold only a-z, 0-9 and '-' (not first or last)", s)
		}
	}
	return nil
}

// NoticeSeverity says how bad what a notice tells is.
type NoticeSeverity string

const (
	SeverityInfo  NoticeSeverity = "info"  // news, nothing broken
	SeverityMinor NoticeSeverity = "minor" // degraded
	SeverityMajor NoticeSeverity = "major" // an outage
)

// StatusNotice is a message an account writes on one of its status pages
// (an outage, a fix, a planned change). It is not an Incident, which is
// the global guard's system-wide state.
type StatusNotice struct {
	ID        int64
	PageID    int64
	Number    int // 1, 2, … within its page: the public, non-secret name
	Title     string
	Body      string
	Severity  NoticeSeverity
	Resolved  *time.Time // when it was marked resolved; nil while open
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Validate checks a notice's fields.
func (n *StatusNotice) Validate() error {
	if err := ValidateText("title", n.Title, MaxNoticeTitleLen, TextRequired); err != nil {
		return err
	}
	if err := ValidateText("body", n.Body, MaxNoticeBodyLen, TextLines); err != nil {
		return err
	}
	switch n.Severity {
	case SeverityInfo, SeverityMinor, SeverityMajor:
	default:
		return FieldError("severity", "%q is not one of info, minor, major", n.Severity)
	}
	return nil
}

// StatusPageBeet is what a status page needs of a beet: no token, no
// model.
type StatusPageBeet struct {
	ID          int64
	Name        string
	Status      Status
	StatusSince time.Time
	CreatedAt   time.Time
	Tags        []string
}

// StatusFlip is one state change, as a page's history bars need it.
type StatusFlip struct {
	BeetID int64
	At     time.Time
	From   Status
	To     Status
}

// StatusPageStore keeps status pages and their notices.
type StatusPageStore interface {
	// CreateStatusPage inserts p and sets its ID; a taken slug is
	// ECONFLICT on the field slug.
	CreateStatusPage(ctx context.Context, p *StatusPage) error
	// UpdateStatusPage stores every field of p but its account and
	// creation time; a taken slug is ECONFLICT, a missing page ENOTFOUND.
	UpdateStatusPage(ctx context.Context, p *StatusPage) error
	FindStatusPageByID(ctx context.Context, id int64) (*StatusPage, error)
	FindStatusPageBySlug(ctx context.Context, slug string) (*StatusPage, error)
	// FindStatusPages returns the account's pages, oldest first.
	FindStatusPages(ctx context.Context, accountID int64) ([]*StatusPage, error)
	// DeleteStatusPage removes the page with its notices.
	DeleteStatusPage(ctx context.Context, id int64) error
	// CreateStatusNotice inserts n with the next Number of its page and
	// sets its ID and Number.
	CreateStatusNotice(ctx context.Context, n *StatusNotice) error
	// UpdateStatusNotice stores n's title, body, severity, resolved and
	// updated times.
	UpdateStatusNotice(ctx context.Context, n *StatusNotice) error
	FindStatusNoticeByID(ctx context.Context, id int64) (*StatusNotice, error)
	// FindStatusNotices returns the page's notices, newest first.
	FindStatusNotices(ctx context.Context, pageID int64, limit int) ([]*StatusNotice, error)
	DeleteStatusNotice(ctx context.Context, id int64) error
	// FindStatusPageBeets returns, by name, up to limit of the account's
	// beets that carry one of tags or are in ids, with their tags.
	FindStatusPageBeets(ctx context.Context, accountID int64, tags []string, ids []int64, limit int) ([]*StatusPageBeet, error)
	// FindStatusFlips returns the beets' flips at or after since, newest
	// first, at most limit (so a limit cuts the oldest).
	FindStatusFlips(ctx context.Context, beetIDs []int64, since time.Time, limit int) ([]*StatusFlip, error)
}
