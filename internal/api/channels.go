package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/httpx"
	"github.com/beethq/beet/internal/service"
)

// channelJSON is a channel as the API shows it: secrets masked (CONTRACT §2).
type channelJSON struct {
	ID                   int64              `json:"id"`
	Kind                 beet.ChannelKind   `json:"kind"`
	Name                 string             `json:"name"`
	Config               beet.ChannelConfig `json:"config"`
	ReminderEverySeconds int64              `json:"reminder_every_seconds"`
	Failing              bool               `json:"failing"`
	FailingSince         *time.Time         `json:"failing_since,omitempty"`
	FailingReason        string             `json:"failing_reason,omitempty"`
	CreatedAt            time.Time          `json:"created_at"`
	UpdatedAt            time.Time          `json:"updated_at"`
}

func toChannelJSON(c *beet.Channel) channelJSON {
	return channelJSON{ID: c.ID, Kind: c.Kind, Name: c.Name, Config: c.Config.Masked(),
		ReminderEverySeconds: int64(c.ReminderEvery / time.Second), Failing: c.FailingSince != nil,
		FailingSince: c.FailingSince, FailingReason: c.FailingReason, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// deliveryJSON is one row of a channel's delivery log.
type deliveryJSON struct {
	ID             int64               `json:"id"`
	At             time.Time           `json:"at"`
	Status         beet.DeliveryStatus `json:"status"`
	Attempts       int                 `json:"attempts"`
	Error          string              `json:"error,omitempty"`
	Event          string              `json:"event"`
	BeetID         int64               `json:"beet_id,omitempty"`
	Reminder       int                 `json:"reminder,omitempty"`
	Flapping       bool                `json:"flapping,omitempty"`
	LastAttemptAt  *time.Time          `json:"last_attempt_at,omitempty"`
	LatencyMS      *float64            `json:"latency_ms,omitempty"`
	NextAttemptAt  *time.Time          `json:"next_attempt_at,omitempty"`
	IdempotencyKey string              `json:"idempotency_key"`
}

func toDeliveryJSON(d *beet.Delivery) deliveryJSON {
	out := deliveryJSON{ID: d.ID, At: d.CreatedAt, Status: d.Status, Attempts: d.Attempts, Error: d.Error,
		Event: d.Event, BeetID: d.BeetID, Reminder: d.Reminder, Flapping: d.Flapping, LastAttemptAt: d.LastAt,
		IdempotencyKey: d.IdempotencyKey()}
	if d.LastAt != nil {
		ms := float64(d.Latency.Microseconds()) / 1000
		out.LatencyMS = &ms
	}
	if d.Status == beet.DeliveryPending {
		next := d.NextAt
		out.NextAttemptAt = &next
	}
	return out
}

type channelConfigRequest struct {
	URL        string `json:"url"`
	Secret     string `json:"secret"`
	To         string `json:"to"`
	RoutingKey string `json:"routing_key"`
}

type channelCreateRequest struct {
	Kind                 beet.ChannelKind     `json:"kind"`
	Name                 string               `json:"name"`
	Config               channelConfigRequest `json:"config"`
	ReminderEverySeconds int64                `json:"reminder_every_seconds"`
}

type channelUpdateRequest struct {
	Name                 *string               `json:"name"`
	Config               *channelConfigRequest `json:"config"`
	ReminderEverySeconds *int64                `json:"reminder_every_seconds"`
}

// seconds converts a count of seconds, refusing what would overflow.
func seconds(field string, n int64) (time.Duration, error) {
	if n < 0 || n > int64(10*365*24*time.Hour/time.Second) {
		return 0, beet.FieldError(field, "must be from 0 to %d", int64(10*365*24*time.Hour/time.Second))
	}
	return time.Duration(n) * time.Second, nil
}

// channelID reads {id} as a channel ID.
func channelID(r *http.Request, what string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, beet.Errorf(beet.ENOTFOUND, "%s %q not found", what, beet.RedactPath(r.PathValue("id")))
	}
	return id, nil
}

func (h *Handler) createChannel(w http.ResponseWriter, r *http.Request, accountID int64) error {
	return createResource(w, r, func(req channelCreateRequest) (*beet.Channel, error) {
		every, err := seconds("reminder_every_seconds", req.ReminderEverySeconds)
		if err != nil {
			return nil, err
		}
		return h.svc.CreateChannel(r.Context(), accountID, service.ChannelInput{
			Kind: req.Kind, Name: req.Name, Config: beet.ChannelConfig(req.Config), ReminderEvery: every})
	}, func(c *beet.Channel) string { return "/api/v1/channels/" + itoa(c.ID) }, toChannelJSON)
}

func (h *Handler) updateChannel(w http.ResponseWriter, r *http.Request, accountID int64) error {
	return updateResource(w, r, idOf("channel"), func(id int64, req channelUpdateRequest) (*beet.Channel, error) {
		upd := beet.ChannelUpdate{Name: req.Name}
		if req.Config != nil {
			cfg := beet.ChannelConfig(*req.Config)
			upd.Config = &cfg
		}
		if req.ReminderEverySeconds != nil {
			every, err := seconds("reminder_every_seconds", *req.ReminderEverySeconds)
			if err != nil {
				return nil, err
			}
			upd.ReminderEvery = &every
		}
		return h.svc.UpdateChannel(r.Context(), accountID, id, upd)
	}, toChannelJSON)
}

func (h *Handler) testChannel(w http.ResponseWriter, r *http.Request, accountID int64) error {
	id, err := channelID(r, "channel")
	if err != nil {
		return err
	}
	d, err := h.svc.TestChannel(r.Context(), accountID, id)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, toDeliveryJSON(d))
	return nil
}

func (h *Handler) listDeliveries(w http.ResponseWriter, r *http.Request, accountID int64) error {
	id, err := channelID(r, "channel")
	if err != nil {
		return err
	}
	limit, err := queryLimit(r)
	if err != nil {
		return err
	}
	ds, err := h.svc.Deliveries(r.Context(), accountID, id, limit)
	return writeList(w, "deliveries", ds, err, toDeliveryJSON)
}

type beetChannelsJSON struct {
	Channels []int64 `json:"channels"`
}

func (h *Handler) getBeetChannels(w http.ResponseWriter, r *http.Request, accountID int64) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	ids, err := h.svc.BeetChannels(r.Context(), accountID, id)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, beetChannelsJSON{ids})
	return nil
}

func (h *Handler) setBeetChannels(w http.ResponseWriter, r *http.Request, accountID int64) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	var req struct {
		Channels *[]int64 `json:"channels"`
	}
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.Channels == nil {
		return beet.FieldError("channels", "is required: a list of channel IDs ([] silences the beet)")
	}
	ids, err := h.svc.SetBeetChannels(r.Context(), accountID, id, *req.Channels)
	if err != nil {
		return err
	}
	httpx.WriteJSON(w, http.StatusOK, beetChannelsJSON{ids})
	return nil
}

type maintenanceJSON struct {
	ID              int64      `json:"id"`
	BeetID          *int64     `json:"beet_id"`
	StartsAt        *time.Time `json:"starts_at,omitempty"`
	EndsAt          *time.Time `json:"ends_at,omitempty"`
	Cron            string     `json:"cron,omitempty"`
	Timezone        string     `json:"timezone,omitempty"`
	DurationSeconds int64      `json:"duration_seconds,omitempty"`
	Note            string     `json:"note"`
	Active          bool       `json:"active"`
	CreatedAt       time.Time  `json:"created_at"`
}

func (h *Handler) toMaintenanceJSON(m *beet.MaintenanceWindow) maintenanceJSON {
	out := maintenanceJSON{ID: m.ID, StartsAt: m.Start, EndsAt: m.End, Cron: m.Cron, Timezone: m.Timezone,
		DurationSeconds: int64(m.Duration / time.Second), Note: m.Note, Active: service.Covers(m, h.svc.Now()), CreatedAt: m.CreatedAt}
	if m.BeetID != 0 {
		id := m.BeetID
		out.BeetID = &id
	}
	return out
}

type maintenanceRequest struct {
	BeetID          int64      `json:"beet_id"`
	StartsAt        *time.Time `json:"starts_at"`
	EndsAt          *time.Time `json:"ends_at"`
	Cron            string     `json:"cron"`
	Timezone        string     `json:"timezone"`
	DurationSeconds int64      `json:"duration_seconds"`
	Note            string     `json:"note"`
}

func (h *Handler) createMaintenance(w http.ResponseWriter, r *http.Request, accountID int64) error {
	var req maintenanceRequest
	if err := httpx.DecodeJSON(w, r, &req); err != nil {
		return err
	}
	d, err := seconds("duration_seconds", req.DurationSeconds)
	if err != nil {
		return err
	}
	m := &beet.MaintenanceWindow{BeetID: req.BeetID, Start: req.StartsAt, End: req.EndsAt, Cron: req.Cron,
		Timezone: req.Timezone, Duration: d, Note: req.Note}
	if err := h.svc.CreateMaintenance(r.Context(), accountID, m); err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/maintenance/"+itoa(m.ID))
	httpx.WriteJSON(w, http.StatusCreated, h.toMaintenanceJSON(m))
	return nil
}
