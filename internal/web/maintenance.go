package web

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
	"github.com/beethq/beet/internal/service"
)

// Maintenance windows: listed on the account page, added on a page of
// their own, deleted after a confirmation. The service checks them as it
// does for the API; the form only turns what people type into a window.

// windowRow is a maintenance window as the account page shows it.
type windowRow struct {
	*beet.MaintenanceWindow
	Scope  string // "Every beet" or the beet's name
	When   string // in words
	Active bool
	Ended  bool // a one-off window that is over; a later one or a repeating one is scheduled
}

func (h *Handler) windowRows(r *http.Request, acc int64) ([]windowRow, error) {
	ws, err := h.svc.MaintenanceWindows(r.Context(), acc)
	if err != nil || len(ws) == 0 {
		return nil, err
	}
	ids := make([]int64, 0, len(ws))
	for _, w := range ws {
		ids = append(ids, w.BeetID)
	}
	names, err := h.beetNames(r, acc, ids)
	if err != nil {
		return nil, err
	}
	now := h.svc.Now()
	out := make([]windowRow, 0, len(ws))
	for _, w := range ws {
		row := windowRow{MaintenanceWindow: w, Scope: "Every beet", Active: service.Covers(w, now)}
		row.Ended = !row.Active && w.Cron == "" && w.End != nil && !w.End.After(now)
		if w.BeetID != 0 {
			row.Scope = names[w.BeetID]
			if row.Scope == "" {
				row.Scope = "Beet " + strconv.FormatInt(w.BeetID, 10)
			}
		}
		if w.Cron != "" {
			row.When = "At " + w.Cron + " (cron, " + w.Timezone + ") for " + detect.Duration(w.Duration)
		} else if w.Start != nil && w.End != nil {
			row.When = "From " + w.Start.UTC().Format("2006-01-02 15:04") + " to " + w.End.UTC().Format("2006-01-02 15:04 MST")
		}
		out = append(out, row)
	}
	return out, nil
}

// beetOption is one beet a form lets people choose.
type beetOption struct {
	ID   int64
	Name string
}

// beetOptions lists the beets a form offers: the chosen ones first, so a
// form always shows what it holds however many beets the account has,
// then the others whose name contains name (all when it is ""), by name,
// up to beet.MaxPageLimit in all. left is how many beets that match are
// not listed. A chosen ID the account has no beet of is left out (the
// service names it when the form is posted).
func (h *Handler) beetOptions(r *http.Request, acc int64, name string, chosen ...int64) (opts []beetOption, left int, err error) {
	bs, total, err := h.svc.Beets(r.Context(), acc, beet.BeetFilter{Name: name, Order: beet.OrderName, Limit: beet.MaxPageLimit})
	if err != nil {
		return nil, 0, err
	}
	byID := make(map[int64]*beet.Beet, len(bs))
	for _, b := range bs {
		byID[b.ID] = b
	}
	seen := make(map[int64]bool, len(chosen))
	listed := 0 // of the beets that match
	for _, id := range chosen {
		if seen[id] || id <= 0 {
			continue
		}
		b := byID[id]
		if b == nil {
			if b, err = h.svc.Beet(r.Context(), acc, id); beet.ErrorCode(err) == beet.ENOTFOUND {
				continue
			} else if err != nil {
				return nil, 0, err
			}
		}
		seen[id] = true
		opts = append(opts, beetOption{b.ID, b.Name})
		if strings.Contains(strings.ToLower(b.Name), strings.ToLower(name)) {
			listed++
		}
	}
	for _, b := range bs {
		if len(opts) >= beet.MaxPageLimit {
			break
		}
		if !seen[b.ID] {
			seen[b.ID] = true
			opts = append(opts, beetOption{b.ID, b.Name})
			listed++
		}
	}
	return opts, max(0, total-listed), nil
}

// beetNames names the beets of ids.
func (h *Handler) beetNames(r *http.Request, acc int64, ids []int64) (map[int64]string, error) {
	m := make(map[int64]string, len(ids))
	for _, id := range ids {
		if _, ok := m[id]; ok || id <= 0 {
			continue
		}
		b, err := h.svc.Beet(r.Context(), acc, id)
		if beet.ErrorCode(err) == beet.ENOTFOUND {
			continue
		} else if err != nil {
			return nil, err
		}
		m[id] = b.Name
	}
	return m, nil
}

// windowForm is the new-window form as typed.
type windowForm struct {
	Mode     string // "once" or "repeat"
	BeetID   string
	Starts   string // datetime-local, in Timezone
	Ends     string
	Timezone string
	Cron     string
	Minutes  string // a repeating window's length
	Note     string
}

var windowFields = map[string]bool{"beet_id": true, "starts_at": true, "ends_at": true, "timezone": true, "cron": true,
	"duration_seconds": true, "note": true}

type windowNewView struct {
	layoutView
	F         windowForm
	Beets     []beetOption
	BeetsLeft int // beets the select does not list
	Timezones []string
	Err       *formError
	ErrAtTop  bool
}

func (h *Handler) windowNewView(r *http.Request, p *reqCtx, f windowForm, err error) (windowNewView, error) {
	v := windowNewView{layoutView: h.layout(r, p, "New maintenance window"), F: f, Timezones: commonZones}
	var berr error
	chosen, _ := strconv.ParseInt(strings.TrimSpace(f.BeetID), 10, 64)
	if v.Beets, v.BeetsLeft, berr = h.beetOptions(r, p.session.AccountID, "", chosen); berr != nil {
		return v, berr
	}
	if err != nil {
		v.Err = formErr(err)
		v.ErrAtTop = !windowFields[v.Err.Field]
	}
	return v, nil
}

func (h *Handler) newWindowForm(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	// Times are typed in the beet's zone when the window is for one, else
	// in the account's.
	f := windowForm{Mode: "once", BeetID: r.URL.Query().Get("beet")}
	var err error
	if f.Timezone, err = h.accountZone(r.Context(), p.session.AccountID); err != nil {
		return err
	}
	if id, perr := strconv.ParseInt(f.BeetID, 10, 64); perr == nil {
		if b, err := h.svc.Beet(r.Context(), p.session.AccountID, id); err == nil {
			f.Timezone = b.Timezone
		}
	}
	v, err := h.windowNewView(r, p, f, nil)
	return h.renderPage(w, r, "maintenance_new", v, err)
}

// window reads the form into a window; the service validates it.
func (f windowForm) window() (*beet.MaintenanceWindow, error) {
	w := &beet.MaintenanceWindow{Note: f.Note}
	if s := strings.TrimSpace(f.BeetID); s != "" && s != "0" {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= 0 {
			return nil, beet.FieldError("beet_id", "%q is not a beet", s)
		}
		w.BeetID = id
	}
	tz := strings.TrimSpace(f.Timezone)
	if f.Mode == "repeat" {
		w.Cron, w.Timezone = strings.TrimSpace(f.Cron), tz
		if w.Cron == "" {
			return nil, beet.FieldError("cron", "is required for a repeating window")
		}
		secs, err := parseMinutes("duration_seconds", f.Minutes)
		if err != nil {
			return nil, err
		}
		w.Duration = time.Duration(secs) * time.Second
		return w, nil
	}
	if err := beet.ValidateTimezone("timezone", tz); err != nil {
		return nil, err
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, beet.FieldError("timezone", "%q is not an IANA time zone", tz)
	}
	at := func(field, s string) (*time.Time, error) {
		s = strings.TrimSpace(s)
		if s == "" {
			return nil, beet.FieldError(field, "is required")
		}
		for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04"} {
			if t, err := time.ParseInLocation(layout, s, loc); err == nil {
				return &t, nil
			}
		}
		return nil, beet.FieldError(field, "%q is not a date and time such as 2026-06-01T22:00", s)
	}
	if w.Start, err = at("starts_at", f.Starts); err != nil {
		return nil, err
	}
	if w.End, err = at("ends_at", f.Ends); err != nil {
		return nil, err
	}
	return w, nil
}

func (h *Handler) createWindow(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	f := windowForm{Mode: r.PostFormValue("mode"), BeetID: r.PostFormValue("beet_id"), Starts: r.PostFormValue("starts_at"),
		Ends: r.PostFormValue("ends_at"), Timezone: r.PostFormValue("timezone"), Cron: r.PostFormValue("cron"),
		Minutes: r.PostFormValue("duration_minutes"), Note: r.PostFormValue("note")}
	mw, err := f.window()
	if err == nil {
		err = h.svc.CreateMaintenance(r.Context(), p.session.AccountID, mw)
	}
	switch code := beet.ErrorCode(err); {
	case err == nil:
		h.redirect(w, r, "/account?done=window#maintenance")
		return nil
	case code == beet.EVALIDATION || code == beet.ECONFLICT || (code == beet.ENOTFOUND && beet.ErrorField(err) == "beet_id"):
		v, verr := h.windowNewView(r, p, f, err)
		if verr != nil {
			return verr
		}
		status := http.StatusUnprocessableEntity
		if code == beet.ECONFLICT {
			status = http.StatusConflict
		}
		h.render(w, r, status, "maintenance_new", v)
		return nil
	}
	return err
}

// accountWindow finds the account's window by the path's {id}.
func (h *Handler) accountWindow(r *http.Request, acc int64) (windowRow, error) {
	id, err := pathID(r)
	if err != nil {
		return windowRow{}, err
	}
	rows, err := h.windowRows(r, acc)
	if err != nil {
		return windowRow{}, err
	}
	for _, row := range rows {
		if row.ID == id {
			return row, nil
		}
	}
	return windowRow{}, beet.Errorf(beet.ENOTFOUND, "maintenance window %d not found", id)
}

func (h *Handler) confirmWindowDelete(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	row, err := h.accountWindow(r, p.session.AccountID)
	if err != nil {
		return err
	}
	url := "/account/maintenance/" + strconv.FormatInt(row.ID, 10)
	h.render(w, r, http.StatusOK, "confirm", confirmView{layoutView: h.layout(r, p, "Delete this maintenance window?"),
		Name: row.Scope + ": " + row.When, Action: url + "/delete", Back: "/account#maintenance",
		Title: "Delete this maintenance window?", Message: windowDeleteMessage, Button: "Delete window"})
	return nil
}

const windowDeleteMessage = "Alerts during it are sent again from now on. This cannot be undone."
