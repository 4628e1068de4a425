package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/httpx"
)

type eventJSON struct {
	ID         string     `json:"id"`
	ReceivedAt microsTime `json:"received_at"`
	Value      *float64   `json:"value,omitempty"`
	Method     string     `json:"method"`
	UserAgent  string     `json:"user_agent"`
	// Kind is ping, start, fail or log (job signals); ExitCode the code
	// of /{exit code}; DurationMS the run's length on the event that ended
	// a run; Message a signal's body text.
	Kind       beet.EventKind `json:"kind"`
	ExitCode   *int           `json:"exit_code,omitempty"`
	DurationMS *int64         `json:"duration_ms,omitempty"`
	Message    string         `json:"message,omitempty"`
}

type rotatedTokenJSON struct {
	Prefix        string     `json:"prefix"`
	RotatedAt     time.Time  `json:"rotated_at"`
	Hits          int64      `json:"hits"`
	LastHitAt     *time.Time `json:"last_hit_at,omitempty"`
	LastAddr      string     `json:"last_addr,omitempty"`
	LastUserAgent string     `json:"last_user_agent,omitempty"`
}

func toRotatedTokenJSON(t *beet.RotatedToken) rotatedTokenJSON {
	return rotatedTokenJSON{Prefix: t.Prefix, RotatedAt: t.RotatedAt, Hits: t.Hits, LastHitAt: t.LastHitAt,
		LastAddr: t.LastAddr, LastUserAgent: t.LastUserAgent}
}

// microsTime writes an event's received_at with all six digits of its
// microseconds (time.Time's JSON drops trailing zeros), so every
// received_at has one length and sorts as text.
type microsTime time.Time

// microsLayout is RFC 3339 with microseconds, in UTC.
const microsLayout = "2006-01-02T15:04:05.000000Z07:00"

func (t microsTime) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format(microsLayout) + `"`), nil
}

func toEventJSON(e *beet.Event) eventJSON {
	out := eventJSON{ID: e.ID.String(), ReceivedAt: microsTime(e.ReceivedAt), Value: e.Value, Method: e.Method, UserAgent: e.UserAgent,
		Kind: e.Kind.Normal(), ExitCode: e.ExitCode, Message: e.Message}
	if e.Duration != nil {
		ms := e.Duration.Milliseconds()
		out.DurationMS = &ms
	}
	return out
}

type problemJSON struct {
	At     time.Time        `json:"at"`
	Kind   beet.ProblemKind `json:"kind"`
	Detail string           `json:"detail"`
}

func (h *Handler) listEvents(w http.ResponseWriter, r *http.Request, accountID int64) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	f := beet.EventFilter{BeetID: id}
	if f.Limit, err = queryLimit(r); err != nil {
		return err
	}
	if f.Since, err = queryTime(r, "since"); err != nil {
		return err
	}
	if f.Until, err = queryTime(r, "until"); err != nil {
		return err
	}
	if s := r.URL.Query().Get("before_id"); s != "" {
		before, ok := beet.ParseEventID(s)
		if !ok {
			return beet.FieldError("before_id", "%.40q is not an event ID", s)
		}
		if f.Until == nil {
			return beet.FieldError("before_id", "goes with until: the received_at of the event it names")
		}
		f.BeforeID = &before
	}
	events, err := h.svc.Events(r.Context(), accountID, f)
	if err != nil {
		return err
	}
	out := struct {
		Events []eventJSON `json:"events"`
		Next   *eventPage  `json:"next,omitempty"`
	}{Events: make([]eventJSON, 0, len(events))}
	for _, e := range events {
		out.Events = append(out.Events, toEventJSON(e))
	}
	if n := len(events); n > 0 && n == pageSize(f.Limit) {
		oldest := out.Events[n-1]
		out.Next = &eventPage{Until: oldest.ReceivedAt, BeforeID: oldest.ID}
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) listFlips(w http.ResponseWriter, r *http.Request, accountID int64) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	f := beet.FlipFilter{BeetID: id}
	if f.Limit, err = queryLimit(r); err != nil {
		return err
	}
	if f.Until, err = queryTime(r, "until"); err != nil {
		return err
	}
	if s := r.URL.Query().Get("before_id"); s != "" {
		before, err := strconv.ParseInt(s, 10, 64)
		if err != nil || before <= 0 {
			return beet.FieldError("before_id", "%.40q is not a flip ID (the before_id of a next)", s)
		}
		f.BeforeID = &before
	}
	flips, err := h.svc.Flips(r.Context(), accountID, f)
	if err != nil {
		return err
	}
	out := struct {
		Flips []beet.FlipJSON `json:"flips"`
		Next  *flipPage       `json:"next,omitempty"`
	}{Flips: make([]beet.FlipJSON, 0, len(flips))}
	for _, fl := range flips {
		out.Flips = append(out.Flips, fl.JSON())
	}
	if n := len(flips); n > 0 && n == pageSize(f.Limit) {
		oldest := flips[n-1]
		out.Next = &flipPage{Until: microsTime(oldest.At), BeforeID: oldest.ID}
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}

// flipPage is the query of the next, older page of flips, as eventPage is
// of events: the oldest flip's time and ID.
type flipPage struct {
	Until    microsTime `json:"until"`
	BeforeID int64      `json:"before_id"`
}

// eventPage is the query of the next, older page of events: a full page
// may have more behind it (the last page may come back empty).
type eventPage struct {
	Until    microsTime `json:"until"`
	BeforeID string     `json:"before_id"`
}

// pageSize is the page a limit asks for (0: the default).
func pageSize(limit int) int {
	if limit == 0 {
		return beet.DefaultPageLimit
	}
	return limit
}

// beetList serves a list that belongs to one beet (problems, rotated tokens): it
// reads {id} and ?limit=, fetches, and answers {key: [...]}, newest first.
func beetList[T, J any](key string, find func(ctx context.Context, accountID, id int64, limit int) ([]*T, error), toJSON func(*T) J) func(http.ResponseWriter, *http.Request, int64) error {
	return func(w http.ResponseWriter, r *http.Request, accountID int64) error {
		id, err := pathID(r)
		if err != nil {
			return err
		}
		limit, err := queryLimit(r)
		if err != nil {
			return err
		}
		items, err := find(r.Context(), accountID, id, limit)
		return writeList(w, key, items, err, toJSON)
	}
}

func toProblemJSON(p *beet.Problem) problemJSON {
	return problemJSON{At: p.At, Kind: p.Kind, Detail: p.Detail}
}

// queryTime reads an optional RFC 3339 time, or Unix seconds.
func queryTime(r *http.Request, name string) (*time.Time, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return nil, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return &t, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 && n < 1<<40 {
		t := time.Unix(n, 0).UTC()
		return &t, nil
	}
	return nil, beet.FieldError(name, "%q is not an RFC 3339 time (2026-01-02T15:04:05Z) or Unix seconds", s)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

type incidentJSON struct {
	StartedAt time.Time  `json:"started_at"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	Open      bool       `json:"open"`
	Reason    string     `json:"reason"`
	EndReason string     `json:"end_reason,omitempty"`
	Held      int        `json:"held"`
	Back      int        `json:"back"`
}

// listIncidents: the global guard's system incidents, newest first, with
// the account's own held beets counted.
func (h *Handler) listIncidents(w http.ResponseWriter, r *http.Request, accountID int64) error {
	limit, err := queryLimit(r)
	if err != nil {
		return err
	}
	incs, err := h.svc.Incidents(r.Context(), accountID, limit)
	if err != nil {
		return err
	}
	out := struct {
		Incidents []incidentJSON `json:"incidents"`
	}{make([]incidentJSON, 0, len(incs))}
	for _, i := range incs {
		out.Incidents = append(out.Incidents, incidentJSON{StartedAt: i.StartedAt, EndedAt: i.EndedAt, Open: i.EndedAt == nil,
			Reason: i.Reason, EndReason: i.EndReason, Held: i.Held, Back: i.Back})
	}
	httpx.WriteJSON(w, http.StatusOK, out)
	return nil
}
