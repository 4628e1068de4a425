package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
	"github.com/beethq/beet/internal/httpx"
	"github.com/beethq/beet/internal/service"
)

// beetJSON is a beet as the API shows it (CONTRACT §2).
type beetJSON struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Token is left out for read-only keys (forKey); UniqueKey is there
	// for every key.
	Token        string         `json:"token,omitempty"`
	UniqueKey    string         `json:"unique_key"`
	Status       beet.Status    `json:"status"`
	StatusReason string         `json:"status_reason"`
	Timezone     string         `json:"timezone"`
	Detection    beet.Detection `json:"detection"`
	Expectation  string         `json:"expectation"`
	Watching     *WatchingJSON  `json:"watching"`
	AllowBots    bool           `json:"allow_bots"`
	// ResumeOnEvent: a paused beet's next counted event resumes it.
	ResumeOnEvent bool       `json:"resume_on_event"`
	LastEventAt   *time.Time `json:"last_event_at"`
	DueAt         *time.Time `json:"due_at"`
	// RunningSince is when the open run started (job signals); absent
	// when no run is open.
	RunningSince *time.Time `json:"running_since,omitempty"`
	Channels     []int64    `json:"channels"`
	// Tags are the beet's tags, sorted; [] when it has none.
	Tags      []string  `json:"tags"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func toBeetJSON(b *beet.Beet) beetJSON {
	tags := b.Tags
	if tags == nil {
		tags = []string{}
	}
	due := b.DueAt
	if b.Status == beet.StatusPaused {
		due = nil // nothing is due while paused (a deadline kept from before is not judged)
	}
	return beetJSON{
		ID: b.ID, Name: b.Name, Description: b.Description, Token: b.Token, UniqueKey: b.UniqueKey(),
		Status: b.Status, StatusReason: b.StatusReason, Timezone: b.Timezone,
		Detection: b.Detection, Expectation: expectation(b), Watching: Watching(b), AllowBots: b.AllowBots,
		ResumeOnEvent: b.ResumeOnEvent,
		LastEventAt:   b.LastEventAt, DueAt: due, RunningSince: b.Runs.StartedAt, Channels: b.Channels,
		Tags: tags, CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt,
	}
}

// beetFor is the beet as the request's key may see it: without its token
// for a read-only key.
func beetFor(r *http.Request, b *beet.Beet) beetJSON {
	j := toBeetJSON(b)
	if !showsTokens(r) {
		j.Token = ""
	}
	return j
}

// withTags loads the tags of beets already scoped to the account.
func (h *Handler) withTags(r *http.Request, beets ...*beet.Beet) error {
	return h.svc.FillTags(r.Context(), beets...)
}

// WatchingJSON is what auto mode watches a beet for and from when
// (detect.Watching): the API's beet.watching, and what `beet backtest
// --watching` prints of the beet a replay left.
type WatchingJSON struct {
	Model             string     `json:"model"`
	Description       string     `json:"description"`
	Cron              string     `json:"cron,omitempty"`
	Timezone          string     `json:"timezone,omitempty"`
	GraceSeconds      int64      `json:"grace_seconds,omitempty"`
	ArmedAt           *time.Time `json:"armed_at"`
	ArmsBy            *time.Time `json:"arms_by,omitempty"`
	AlertAfterSeconds int64      `json:"alert_after_seconds,omitempty"`
	SuggestedZone     string     `json:"suggested_zone,omitempty"`
}

// Watching is b's WatchingJSON; nil (null) for a beet not in auto mode or
// without events.
func Watching(b *beet.Beet) *WatchingJSON {
	w, ok := detect.Watch(b)
	if !ok {
		return nil
	}
	return &WatchingJSON{Model: string(w.Model), Description: w.Description, Cron: w.Cron, Timezone: w.Timezone,
		GraceSeconds: w.GraceSeconds, ArmedAt: w.ArmedAt, ArmsBy: w.ArmsBy,
		AlertAfterSeconds: int64(w.AlertAfter / time.Second), SuggestedZone: w.SuggestedZone}
}

// expectation is the detector's sentence, and how runs are watched when
// the beet reports runs.
func expectation(b *beet.Beet) string {
	if runs := detect.RunExpectation(b); runs != "" {
		return detect.Expectation(b) + " " + runs
	}
	return detect.Expectation(b)
}

type beetCreateRequest struct {
	Name          string          `json:"name"`
	Description   string          `json:"description"`
	Timezone      string          `json:"timezone"`
	Detection     *beet.Detection `json:"detection"`
	AllowBots     bool            `json:"allow_bots"`
	ResumeOnEvent bool            `json:"resume_on_event"`
	Channels      *[]int64        `json:"channels"`
	Tags          *[]string       `json:"tags"`
}

// beetUpdateRequest leaves out what the client leaves out; a null counts as
// left out.
type beetUpdateRequest struct {
	Name          *string         `json:"name"`
	Description   *string         `json:"description"`
	Timezone      *string         `json:"timezone"`
	Detection     *beet.Detection `json:"detection"`
	AllowBots     *bool           `json:"allow_bots"`
	ResumeOnEvent *bool           `json:"resume_on_event"`
	Channels      *[]int64        `json:"channels"`
	Tags          *[]string       `json:"tags"`
}

type accountJSON struct {
	ID        int64     `json:"id"`
	Plan      beet.Plan `json:"plan"`
	Retention string    `json:"retention"`
	// Timezone is the zone the account's new beets (and cron schedules
	// without one) take.
	Timezone  string    `json:"timezone"`
	CreatedAt time.Time `json:"created_at"`
}

// accountUpdateRequest leaves out what the client leaves out.
type accountUpdateRequest struct {
	Timezone *string `json:"timezone"`
}

func (h *Handler) getAccount(w http.ResponseWriter, r *http.Request, accountID int64) error {
	a, err := h.svc.Account(r.Context(), accountID)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, accountJSON{ID: a.ID, Plan: a.Plan, Retention: a.Plan.RetentionText(), Timezone: a.Timezone, CreatedAt: a.CreatedAt})
	return nil
}

func (h *Handler) updateAccount(w http.ResponseWriter, r *http.Request, accountID int64) error {
	var req accountUpdateRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.Timezone != nil {
		if err := h.svc.SetAccountTimezone(r.Context(), accountID, *req.Timezone); err != nil {
			return err
		}
	}
	return h.getAccount(w, r, accountID)
}

func (h *Handler) createBeet(w http.ResponseWriter, r *http.Request, accountID int64) error {
	var req beetCreateRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	// Tags are checked before the beet exists, so a bad tag creates nothing.
	var tags []string
	if req.Tags != nil {
		var err error
		if tags, err = beet.CleanTags("tags", *req.Tags); err != nil {
			return err
		}
	}
	b, err := h.svc.CreateBeet(r.Context(), accountID, service.BeetInput{Name: req.Name, Description: req.Description,
		Timezone: req.Timezone, Detection: req.Detection, AllowBots: req.AllowBots, ResumeOnEvent: req.ResumeOnEvent, Channels: req.Channels})
	if err != nil {
		return err
	}
	if len(tags) > 0 {
		if b.Tags, err = h.svc.SetBeetTagList(r.Context(), accountID, b.ID, tags); err != nil {
			return err
		}
	}
	w.Header().Set("Location", "/api/v1/beets/"+itoa(b.ID))
	httpx.WriteJSON(w, http.StatusCreated, toBeetJSON(b))
	return nil
}

func (h *Handler) listBeets(w http.ResponseWriter, r *http.Request, accountID int64) error {
	var f beet.BeetFilter
	var err error
	if f.Limit, err = queryLimit(r); err != nil {
		return err
	}
	if f.Offset, err = queryInt(r, "offset"); err != nil {
		return err
	}
	if s := r.URL.Query().Get("status"); s != "" {
		st := beet.Status(s)
		if !st.Valid() {
			return beet.FieldError("status", "unknown status %q", s)
		}
		f.Status = &st
	}
	if t := r.URL.Query().Get("tag"); t != "" {
		f.Tag = strings.ToLower(t)
		if err := beet.ValidateTag("tag", f.Tag); err != nil {
			return err
		}
	}
	beets, total, err := h.svc.Beets(r.Context(), accountID, f)
	if err != nil {
		return err
	}
	if err := h.withTags(r, beets...); err != nil {
		return err
	}
	out := struct {
		Beets []beetJSON `json:"beets"`
		Total int        `json:"total"`
		Next  *beetPage  `json:"next,omitempty"`
	}{Beets: make([]beetJSON, 0, len(beets)), Total: total}
	for _, b := range beets {
		out.Beets = append(out.Beets, beetFor(r, b))
	}
	if seen := f.Offset + len(beets); len(beets) > 0 && seen < total {
		out.Next = &beetPage{Offset: seen}
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// beetPage is the query of the next page of beets, when more match than
// this page and those before it hold: the same filters and limit, with
// this offset.
type beetPage struct {
	Offset int `json:"offset"`
}

func (h *Handler) getBeet(w http.ResponseWriter, r *http.Request, accountID int64) error {
	return h.onBeet(w, r, accountID, h.svc.Beet)
}

func (h *Handler) updateBeet(w http.ResponseWriter, r *http.Request, accountID int64) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	var req beetUpdateRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	// Tags are checked before anything is written.
	if req.Tags != nil {
		if _, err := beet.CleanTags("tags", *req.Tags); err != nil {
			return err
		}
	}
	b, err := h.svc.UpdateBeet(r.Context(), accountID, id, beet.BeetUpdate{Name: req.Name, Description: req.Description,
		Timezone: req.Timezone, Detection: req.Detection, AllowBots: req.AllowBots, ResumeOnEvent: req.ResumeOnEvent, Channels: req.Channels})
	if err != nil {
		return err
	}
	if req.Tags != nil {
		if _, err := h.svc.SetBeetTagList(r.Context(), accountID, id, *req.Tags); err != nil {
			return err
		}
	}
	return h.writeBeet(w, r, b)
}

func (h *Handler) deleteBeet(w http.ResponseWriter, r *http.Request, accountID int64) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if err := h.svc.DeleteBeet(r.Context(), accountID, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *Handler) rotateToken(w http.ResponseWriter, r *http.Request, accountID int64) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	token, err := h.svc.RotateToken(r.Context(), accountID, id)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]string{"token": token})
	return nil
}

func (h *Handler) pause(w http.ResponseWriter, r *http.Request, accountID int64) error {
	return h.onBeet(w, r, accountID, h.svc.Pause)
}

func (h *Handler) resume(w http.ResponseWriter, r *http.Request, accountID int64) error {
	return h.onBeet(w, r, accountID, h.svc.Resume)
}

// onBeet runs do on the beet the path names and answers with the beet it
// returns.
func (h *Handler) onBeet(w http.ResponseWriter, r *http.Request, accountID int64, do func(ctx context.Context, accountID, id int64) (*beet.Beet, error)) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	b, err := do(r.Context(), accountID, id)
	if err != nil {
		return err
	}
	return h.writeBeet(w, r, b)
}

// writeBeet answers 200 with the beet as the API shows it, tags included.
func (h *Handler) writeBeet(w http.ResponseWriter, r *http.Request, b *beet.Beet) error {
	if err := h.withTags(r, b); err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, beetFor(r, b))
	return nil
}
