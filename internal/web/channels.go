package web

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
	"github.com/beethq/beet/internal/service"
)

// Channels: the account page lists them; each has a page with its masked
// settings, a test button and its delivery log. Everything goes through
// the service methods the API uses, so the checks (kinds, URLs, private
// targets, limits, account scoping) are the API's.

// channelLog is how many deliveries a channel's page shows.
const channelLog = 50

// kindOption is one choice of the kind select.
type kindOption struct {
	Value beet.ChannelKind
	Label string
}

var kindOptions = []kindOption{
	{beet.ChannelWebhook, "Webhook (signed JSON POST)"},
	{beet.ChannelEmail, "Email"},
	{beet.ChannelSlack, "Slack (incoming webhook)"},
	{beet.ChannelDiscord, "Discord (webhook)"},
	{beet.ChannelTeams, "Microsoft Teams (webhook)"},
	{beet.ChannelPagerDuty, "PagerDuty (Events API v2)"},
	{beet.ChannelNtfy, "ntfy"},
	{beet.ChannelTelegram, "Telegram"},
	{beet.ChannelPushover, "Pushover"},
	{beet.ChannelGotify, "Gotify"},
	{beet.ChannelMatrix, "Matrix"},
	{beet.ChannelMattermost, "Mattermost"},
	{beet.ChannelGoogleChat, "Google Chat"},
	{beet.ChannelZulip, "Zulip"},
	{beet.ChannelOpsgenie, "Opsgenie"},
	{beet.ChannelRocketChat, "Rocket.Chat"},
}

// serviceHelp explains a service-URL kind's URL on the channel forms: its
// form, where its parts come from, and a made-up example.
type serviceHelp struct {
	Kind    beet.ChannelKind
	Label   string
	Form    string
	Note    string
	Example string
}

var serviceHelps = func() []serviceHelp {
	rows := []serviceHelp{
		{Kind: beet.ChannelTelegram, Form: "telegram://BOT_TOKEN@telegram?chats=@CHANNEL,CHAT_ID",
			Note: "The bot token from @BotFather; add the bot to each chat."},
		{Kind: beet.ChannelPushover, Form: "pushover://shoutrrr:APP_TOKEN@USER_KEY/?devices=DEVICE",
			Note: "Your application's API token and your user key; devices are optional (all by default)."},
		{Kind: beet.ChannelGotify, Form: "gotify://HOST[:PORT][/PATH]/APP_TOKEN",
			Note: "The application's token (15 characters, starting with A). Add ?disabletls=yes for a server on plain HTTP."},
		{Kind: beet.ChannelMatrix, Form: "matrix://:ACCESS_TOKEN@HOST/?rooms=!ROOM_ID:SERVER,#ALIAS:SERVER",
			Note: "Or matrix://USER:PASSWORD@HOST/…. Without rooms, every room the user has joined. Add &disableTLS=yes for plain HTTP."},
		{Kind: beet.ChannelMattermost, Form: "mattermost://HOST[:PORT]/WEBHOOK_TOKEN[/CHANNEL]",
			Note: "The token at the end of an incoming webhook's URL. Add ?disabletls=yes for plain HTTP."},
		{Kind: beet.ChannelGoogleChat, Form: "googlechat://chat.googleapis.com/v1/spaces/SPACE/messages?key=KEY&token=TOKEN",
			Note: "The space's webhook URL with https:// replaced by googlechat://."},
		{Kind: beet.ChannelZulip, Form: "zulip://BOT_EMAIL:BOT_API_KEY@HOST/?stream=STREAM&topic=TOPIC",
			Note: "Write the @ of the bot's email as %40. The topic defaults to the beet's name."},
		{Kind: beet.ChannelOpsgenie, Form: "opsgenie://api.opsgenie.com/API_KEY",
			Note: "api.eu.opsgenie.com for EU accounts. An alert is closed when its beet recovers."},
		{Kind: beet.ChannelRocketChat, Form: "rocketchat://HOST[:PORT]/TOKEN_A/TOKEN_B[/CHANNEL]",
			Note: "The two tokens at the end of an incoming webhook's URL."},
	}
	for i := range rows {
		rows[i].Label = kindLabel(rows[i].Kind)
		rows[i].Example = beet.ServiceURLExample(rows[i].Kind)
	}
	return rows
}()

// helpFor is the kind's service-URL help, or nil.
func helpFor(k beet.ChannelKind) *serviceHelp {
	for i := range serviceHelps {
		if serviceHelps[i].Kind == k {
			return &serviceHelps[i]
		}
	}
	return nil
}

// urlKinds are the kinds whose form takes a URL, for the form's data-kinds.
var urlKinds = func() string {
	kinds := []string{"webhook", "slack", "discord", "teams", "ntfy"}
	for _, k := range beet.ServiceURLKinds {
		kinds = append(kinds, string(k))
	}
	return strings.Join(kinds, " ")
}()

func kindLabel(k beet.ChannelKind) string {
	for _, o := range kindOptions {
		if o.Value == k {
			return o.Label
		}
	}
	return string(k)
}

// reminderOption is one choice of how often an alert repeats while a beet
// stays down or anomalous; the service checks the value as the API's.
type reminderOption struct {
	Seconds int64
	Label   string
}

var reminderOptions = []reminderOption{
	{0, "Never"}, {900, "Every 15 min"}, {1800, "Every 30 min"}, {3600, "Every hour"}, {4 * 3600, "Every 4 hours"},
	{12 * 3600, "Every 12 hours"}, {86400, "Every day"},
}

// remindersWith is the choices plus the channel's own value when it is
// none of them (set through the API), so saving the form keeps it.
func remindersWith(d time.Duration) []reminderOption {
	secs := int64(d / time.Second)
	for _, o := range reminderOptions {
		if o.Seconds == secs {
			return reminderOptions
		}
	}
	return append(append([]reminderOption(nil), reminderOptions...), reminderOption{secs, "Every " + detect.Duration(d)})
}

// channelRow is a channel as the pages show it: config masked the way the
// API masks it, so no secret reaches the HTML whole. Templates show
// Masked, never the embedded Channel's Config (the tests look for the
// secrets in every page).
type channelRow struct {
	*beet.Channel
	Masked    beet.ChannelConfig
	KindLabel string
	Help      *serviceHelp // how a service URL is written; nil for the other kinds
	Target    string       // where it sends, masked
	Reminder  string
}

func rowOf(c *beet.Channel) channelRow {
	m := c.Config.Masked()
	row := channelRow{Channel: c, Masked: m, KindLabel: kindLabel(c.Kind), Help: helpFor(c.Kind), Reminder: "Never"}
	switch {
	case m.URL != "":
		row.Target = m.URL
	case m.To != "":
		row.Target = m.To
	case m.RoutingKey != "":
		row.Target = "routing key " + m.RoutingKey
	}
	if c.ReminderEvery > 0 {
		row.Reminder = "Every " + detect.Duration(c.ReminderEvery)
	}
	return row
}

// Takes says whether the channel's kind has the setting ("url", "secret",
// "to" or "routing_key"), for the settings form.
func (c channelRow) Takes(field string) bool {
	switch c.Kind {
	case beet.ChannelEmail:
		return field == "to"
	case beet.ChannelPagerDuty:
		return field == "routing_key"
	case beet.ChannelWebhook:
		return field == "url" || field == "secret"
	}
	return field == "url"
}

func channelsOf(cs []*beet.Channel) []channelRow {
	out := make([]channelRow, 0, len(cs))
	for _, c := range cs {
		out = append(out, rowOf(c))
	}
	return out
}

func channelURL(id int64) string { return "/account/channels/" + strconv.FormatInt(id, 10) }

// channelForm is the new-channel form as typed. The secret and the
// routing key are never written back into the page.
type channelForm struct {
	Kind       string
	Name       string
	URL        string
	Secret     string
	To         string
	RoutingKey string
	Reminder   string
}

// channelFields are the form's fields, by the service's field names; an
// error on any other field is shown above the form.
var channelFields = map[string]bool{"kind": true, "name": true, "config.url": true, "config.secret": true,
	"config.to": true, "config.routing_key": true, "reminder_every_seconds": true}

type channelNewView struct {
	layoutView
	Kinds     []kindOption
	Services  []serviceHelp
	URLKinds  string
	Reminders []reminderOption
	F         channelForm
	Err       *formError
	ErrAtTop  bool
}

func (h *Handler) channelNewView(r *http.Request, p *reqCtx, f channelForm, err error) channelNewView {
	v := channelNewView{layoutView: h.layout(r, p, "New channel"), Kinds: kindOptions, Services: serviceHelps, URLKinds: urlKinds,
		Reminders: reminderOptions, F: f}
	if err != nil {
		v.Err = formErr(err)
		v.ErrAtTop = !channelFields[v.Err.Field]
	}
	return v
}

func (h *Handler) channelsRedirect(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	h.redirect(w, r, "/account#channels")
	return nil
}

func (h *Handler) newChannelForm(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	f := channelForm{Kind: string(beet.ChannelWebhook), Reminder: "0"}
	if k := beet.ChannelKind(r.URL.Query().Get("kind")); k.Valid() {
		f.Kind = string(k)
	}
	h.render(w, r, http.StatusOK, "channel_new", h.channelNewView(r, p, f, nil))
	return nil
}

func (h *Handler) createChannel(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	f := channelForm{Kind: r.PostFormValue("kind"), Name: r.PostFormValue("name"), URL: strings.TrimSpace(r.PostFormValue("url")),
		Secret: r.PostFormValue("secret"), To: strings.TrimSpace(r.PostFormValue("to")),
		RoutingKey: strings.TrimSpace(r.PostFormValue("routing_key")), Reminder: r.PostFormValue("reminder_every_seconds")}
	c, err := h.newChannel(r, p, f)
	switch beet.ErrorCode(err) {
	case "":
		h.redirect(w, r, channelURL(c.ID)+"?created=1")
		return nil
	case beet.EVALIDATION, beet.ECONFLICT:
		f.Secret, f.RoutingKey = "", "" // typed again rather than echoed
		if beet.ChannelKind(f.Kind).ServiceURL() {
			f.URL = "" // a service URL holds its token
		}
		status := http.StatusUnprocessableEntity
		if beet.ErrorCode(err) == beet.ECONFLICT {
			status = http.StatusConflict
		}
		h.render(w, r, status, "channel_new", h.channelNewView(r, p, f, err))
		return nil
	}
	return err
}

// reminderOf reads the reminder select, in seconds.
func reminderOf(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > int64(10*365*24*time.Hour/time.Second) {
		return 0, beet.FieldError("reminder_every_seconds", "%q is not one of the choices", s)
	}
	return time.Duration(n) * time.Second, nil
}

func (h *Handler) newChannel(r *http.Request, p *reqCtx, f channelForm) (*beet.Channel, error) {
	every, err := reminderOf(f.Reminder)
	if err != nil {
		return nil, err
	}
	return h.svc.CreateChannel(r.Context(), p.session.AccountID, service.ChannelInput{
		Kind: beet.ChannelKind(f.Kind), Name: f.Name, ReminderEvery: every,
		Config: beet.ChannelConfig{URL: f.URL, Secret: f.Secret, To: f.To, RoutingKey: f.RoutingKey}})
}

// deliveryRow is one line of the delivery log.
type deliveryRow struct {
	*beet.Delivery
	What     string // the event in words
	BeetName string // the beet it is about, by name; "" for a test or a deleted beet
	Latency  string // of the last attempt, or "" before any
}

func deliveryOf(d *beet.Delivery) deliveryRow {
	row := deliveryRow{Delivery: d, What: eventWords(d.Event)}
	if d.Reminder > 0 {
		row.What += fmt.Sprintf(" (reminder %d)", d.Reminder)
	}
	if d.Flapping {
		row.What += " (flapping)"
	}
	if d.LastAt != nil {
		row.Latency = detect.Duration(d.Latency)
	}
	return row
}

func eventWords(e string) string {
	switch e {
	case beet.EventTest:
		return "Test message"
	case beet.EventDown:
		return "Down alert"
	case beet.EventAnomalous:
		return "Anomaly alert"
	case beet.EventUp:
		return "Recovery"
	case beet.EventPaused:
		return "Paused while alerting"
	case beet.EventSettled:
		return "Settled after flapping"
	}
	return e
}

// channelView is a channel's page.
type channelView struct {
	layoutView
	C          channelRow
	Reminders  []reminderOption
	F          channelForm // the settings form: name, reminder and the (unmasked) email address
	Err        *formError  // the settings form's error
	ErrAtTop   bool
	Saved      bool
	Deliveries []deliveryRow
	LogFull    bool         // the log has more than the page shows
	Tested     *deliveryRow // the test message just sent, when there is one
	Created    bool
	Zone       string // the account's time zone, in which times are shown
}

// accountZone is the account's time zone, UTC when it has none: what its
// own things (channels, windows not for one beet) are shown and typed in.
func (h *Handler) accountZone(ctx context.Context, accountID int64) (string, error) {
	a, err := h.svc.Account(ctx, accountID)
	if err != nil {
		return "", err
	}
	return cmp.Or(a.Timezone, "UTC"), nil
}

func (h *Handler) channelView(r *http.Request, p *reqCtx) (*channelView, error) {
	c, err := byPathID(r, p, h.svc.Channel)
	if err != nil {
		return nil, err
	}
	ctx, acc := r.Context(), p.session.AccountID
	ds, err := h.svc.Deliveries(ctx, acc, c.ID, channelLog)
	if err != nil {
		return nil, err
	}
	v := &channelView{layoutView: h.layout(r, p, c.Name), C: rowOf(c), Reminders: remindersWith(c.ReminderEvery),
		F: channelForm{Name: c.Name, To: c.Config.Masked().To, Reminder: strconv.FormatInt(int64(c.ReminderEvery/time.Second), 10)}}
	v.LogFull = len(ds) == channelLog
	if v.Zone, err = h.accountZone(ctx, acc); err != nil {
		return nil, err
	}
	tested, _ := strconv.ParseInt(r.URL.Query().Get("tested"), 10, 64)
	names := map[int64]string{} // the log names each beet, read once
	for _, d := range ds {
		row := deliveryOf(d)
		if d.BeetID != 0 {
			name, ok := names[d.BeetID]
			if !ok {
				if b, err := h.svc.Beet(ctx, acc, d.BeetID); err == nil {
					name = b.Name
				} else if !beet.IsNotFound(err) {
					return nil, err
				}
				names[d.BeetID] = name
			}
			row.BeetName = name
		}
		v.Deliveries = append(v.Deliveries, row)
		if d.ID == tested && d.Event == beet.EventTest {
			v.Tested = &row
		}
	}
	return v, nil
}

func (h *Handler) channelPage(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	v, err := h.channelView(r, p)
	if err == nil {
		q := r.URL.Query()
		v.Created, v.Saved = q.Get("created") == "1", q.Get("saved") == "1"
	}
	return h.renderPage(w, r, "channel", v, err)
}

// saveChannel changes a channel's name, reminders and settings. A setting
// left empty keeps the stored one (UpdateChannel's rule, as in the API),
// so secrets need not be typed again to rename a channel.
func (h *Handler) saveChannel(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	id, err := postedID(w, r)
	if err != nil {
		return err
	}
	f := channelForm{Name: r.PostFormValue("name"), URL: strings.TrimSpace(r.PostFormValue("url")), Secret: r.PostFormValue("secret"),
		To: strings.TrimSpace(r.PostFormValue("to")), RoutingKey: strings.TrimSpace(r.PostFormValue("routing_key")),
		Reminder: r.PostFormValue("reminder_every_seconds")}
	every, err := reminderOf(f.Reminder)
	if err == nil {
		_, err = h.svc.UpdateChannel(r.Context(), p.session.AccountID, id, beet.ChannelUpdate{Name: &f.Name, ReminderEvery: &every,
			Config: &beet.ChannelConfig{URL: f.URL, Secret: f.Secret, To: f.To, RoutingKey: f.RoutingKey}})
	}
	return h.afterPost(w, r, err, channelURL(id)+"?saved=1#settings", func() (string, any, error) {
		v, verr := h.channelView(r, p)
		if verr != nil {
			return "", nil, verr
		}
		f.Secret, f.RoutingKey = "", ""
		if v.C.Kind.ServiceURL() {
			f.URL = "" // a service URL holds its token
		}
		v.F, v.Err = f, formErr(err)
		v.ErrAtTop = !channelFields[v.Err.Field]
		return "channel", v, nil
	})
}

// testChannel sends a test message now and shows the channel's page with
// the delivery as recorded.
func (h *Handler) testChannel(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	d, err := h.svc.TestChannel(r.Context(), p.session.AccountID, id)
	if err != nil {
		return err
	}
	h.redirect(w, r, channelURL(id)+"?tested="+strconv.FormatInt(d.ID, 10)+"#log")
	return nil
}

func (h *Handler) confirmChannelDelete(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	c, err := byPathID(r, p, h.svc.Channel)
	if err != nil {
		return err
	}
	h.render(w, r, http.StatusOK, "confirm", confirmView{layoutView: h.layout(r, p, "Delete this channel?"), Name: c.Name,
		Action: channelURL(c.ID) + "/delete", Back: channelURL(c.ID), Title: "Delete this channel?",
		Message: channelDeleteMessage, Button: "Delete channel"})
	return nil
}

const channelDeleteMessage = "Alerts stop going to it at once, and its delivery log is deleted. This cannot be undone."

// saveBeetChannels sets which of the account's channels the beet notifies:
// the checked ones (none silences it). Another account's channel is not
// found, as in the API.
func (h *Handler) saveBeetChannels(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	id, err := postedID(w, r)
	if err != nil {
		return err
	}
	ids := []int64{}
	for _, s := range r.PostForm["channel"] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return beet.Errorf(beet.ENOTFOUND, "channel %q not found", s)
		}
		ids = append(ids, n)
	}
	if _, err := h.svc.SetBeetChannels(r.Context(), p.session.AccountID, id, ids); err != nil {
		return err
	}
	h.redirect(w, r, beetURL(id)+"#alerts")
	return nil
}
