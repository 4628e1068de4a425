package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/beethq/beet"
)

type accountView struct {
	layoutView
	Account     *beet.Account
	Keys        []*beet.APIKey
	Users       []*beet.User
	Me          int64 // the signed-in user
	Channels    []channelRow
	Windows     []windowRow
	NewKey      string // shown once, right after creation
	NewKeyFor   string
	KeyErr      *formError
	KeyName     string // the key form as typed, after a refusal
	KeyReadOnly bool
	UserErr     *formError
	UserEmail   string
	ZoneErr     *formError
	Zone        string
	PasswordErr *formError
	Notice      string
	BaseURL     string
	Timezones   []string
	TagBadges   []badgeRow
	DocsURL     string
}

// UserRemoveMessage is what removing a user does, for the dialog.
func (accountView) UserRemoveMessage() string { return userRemoveMessage }

// KeyRevokeMessage is what revoking a key does, for the dialog.
func (accountView) KeyRevokeMessage() string { return keyRevokeMessage }

// badgeRow is one status badge a person can paste elsewhere.
type badgeRow struct {
	Label, URL string
	Path       string // the image's source: root-relative, so the page's own host serves it (CSP img-src 'self')
}

func (h *Handler) account(r *http.Request, p *reqCtx) (*accountView, error) {
	ctx, acc := r.Context(), p.session.AccountID
	v := &accountView{layoutView: h.layout(r, p, "Account"), BaseURL: h.baseURL, Me: p.session.UserID, Timezones: commonZones,
		DocsURL: h.prefix + "/api/v1/docs"}
	var err error
	if v.Account, err = h.svc.Account(ctx, acc); err != nil {
		return nil, err
	}
	v.Zone = v.Account.Timezone
	if v.Keys, err = h.svc.APIKeys(ctx, acc); err != nil {
		return nil, err
	}
	if v.Users, err = h.svc.Users(ctx, acc); err != nil {
		return nil, err
	}
	chans, err := h.svc.Channels(ctx, acc)
	if err != nil {
		return nil, err
	}
	v.Channels = channelsOf(chans)
	if v.Windows, err = h.windowRows(r, acc); err != nil {
		return nil, err
	}
	tags, err := h.svc.AccountTags(ctx, acc)
	if err != nil {
		return nil, err
	}
	if len(tags) > 0 {
		_, byTag, err := h.svc.BadgeIDs(ctx, acc, nil, tags)
		if err != nil {
			return nil, err
		}
		for _, t := range tags {
			v.TagBadges = append(v.TagBadges, badgeRow{Label: t, URL: h.badgeURL(byTag[t]), Path: h.badgePath(byTag[t])})
		}
	}
	return v, nil
}

// badgeURL is a badge's address to copy (on the base URL); badgePath the
// image source on the dashboard's own pages, which may be opened at
// another host than the base URL's.
func (h *Handler) badgeURL(id string) string  { return h.baseURL + "/badge/" + id + ".svg" }
func (h *Handler) badgePath(id string) string { return h.prefix + "/badge/" + id + ".svg" }

func (h *Handler) accountPage(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	v, err := h.account(r, p)
	if err != nil {
		return err
	}
	switch r.URL.Query().Get("done") {
	case "revoked":
		v.Notice = "The key is revoked: calls with it fail from now on."
	case "user":
		v.Notice = "The user is added and can sign in now."
	case "user-removed":
		v.Notice = "The user is removed and signed out everywhere."
	case "password":
		v.Notice = "Your password is changed. Your other sessions are signed out."
	case "zone":
		v.Notice = "The time zone is saved: new beets take it."
	case "badges":
		v.Notice = "Badge links are reset: the old ones show nothing any more."
	case "window":
		v.Notice = "The maintenance window is added."
	case "window-deleted":
		v.Notice = "The maintenance window is deleted."
	case "channel-deleted":
		v.Notice = "The channel is deleted: alerts no longer go to it."
	case "key":
		// The key comes once, in the flash the POST left; a refresh finds none.
		if name, key, ok := strings.Cut(h.takeFlash(w, r, "/account"), "\x00"); ok {
			v.NewKey, v.NewKeyFor = key, name
		} else {
			v.Notice = "The key was shown once and is not stored; create another if it was not copied."
		}
	}
	h.render(w, r, http.StatusOK, "account", v)
	return nil
}

// createKey creates the key and redirects (POST-redirect-GET), so a
// refresh cannot create a second one; the key reaches the next page view
// in a short-lived flash and is never stored in plain text.
func (h *Handler) createKey(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	name := r.PostFormValue("name")
	readOnly := r.PostFormValue("access") == "read"
	_, key, kerr := h.svc.CreateScopedAPIKey(r.Context(), p.session.AccountID, name, readOnly)
	if kerr == nil {
		h.setFlash(w, r, "/account", name+"\x00"+key)
		h.redirect(w, r, "/account?done=key#keys")
		return nil
	}
	if beet.ErrorCode(kerr) != beet.EVALIDATION {
		return kerr
	}
	v, err := h.account(r, p)
	if err != nil {
		return err
	}
	v.KeyErr, v.KeyName, v.KeyReadOnly = formErr(kerr), name, readOnly
	h.render(w, r, http.StatusUnprocessableEntity, "account", v)
	return nil
}

// keyRevokeMessage is what revoking a key does, asked before it is done
// (in a dialog, or on the confirmation page without JavaScript).
const keyRevokeMessage = "Every script, exporter or dashboard that uses it fails from now on. This cannot be undone: a new key has a new value."

// confirmKeyRevoke asks before revoking one of the account's live keys.
func (h *Handler) confirmKeyRevoke(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	id, err := strconv.ParseInt(r.PathValue("key"), 10, 64)
	if err != nil || id <= 0 {
		return beet.Errorf(beet.ENOTFOUND, "no such key")
	}
	keys, err := h.svc.APIKeys(r.Context(), p.session.AccountID)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if k.ID != id || k.RevokedAt != nil {
			continue
		}
		title := "Revoke this API key?"
		h.render(w, r, http.StatusOK, "confirm", confirmView{layoutView: h.layout(r, p, title), Name: k.Name + " (" + k.Prefix + ")",
			Action: "/account/keys/" + strconv.FormatInt(id, 10) + "/revoke", Back: "/account#keys", Title: title,
			Message: keyRevokeMessage, Button: "Revoke key"})
		return nil
	}
	return beet.Errorf(beet.ENOTFOUND, "no such key")
}

func (h *Handler) revokeKey(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	id, err := strconv.ParseInt(r.PathValue("key"), 10, 64)
	if err != nil || id <= 0 {
		return beet.Errorf(beet.ENOTFOUND, "no such key")
	}
	if err := h.svc.RevokeAccountAPIKey(r.Context(), p.session.AccountID, id); err != nil {
		return err
	}
	h.redirect(w, r, "/account?done=revoked#keys")
	return nil
}

func (h *Handler) addUser(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	email := r.PostFormValue("email")
	_, err := h.svc.AddUser(r.Context(), p.session.AccountID, email, r.PostFormValue("password"))
	return h.afterPostAs(w, r, err, "/account?done=user#users", formStatus, showAgain("account",
		func() (*accountView, error) { return h.account(r, p) },
		func(v *accountView) { v.UserErr, v.UserEmail = formErr(err), email }))
}

// userRemoveMessage is what removing a user does, asked before it is done
// (in a dialog, or on the confirmation page without JavaScript).
const userRemoveMessage = "They are signed out at once and can no longer sign in. The account's beets, channels and keys stay."

// confirmUserRemove asks before removing one of the account's users.
func (h *Handler) confirmUserRemove(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return beet.Errorf(beet.ENOTFOUND, "no such user")
	}
	users, err := h.svc.Users(r.Context(), p.session.AccountID)
	if err != nil {
		return err
	}
	for _, u := range users {
		if u.ID != id {
			continue
		}
		if u.ID == p.session.UserID {
			return beet.Errorf(beet.ECONFLICT, "you cannot remove yourself; another user of the account can")
		}
		title := "Remove this user?"
		h.render(w, r, http.StatusOK, "confirm", confirmView{layoutView: h.layout(r, p, title), Name: u.Email,
			Action: "/account/users/" + strconv.FormatInt(id, 10) + "/remove", Back: "/account#users", Title: title,
			Message: userRemoveMessage, Button: "Remove user"})
		return nil
	}
	return beet.Errorf(beet.ENOTFOUND, "no such user")
}

func (h *Handler) removeUser(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return beet.Errorf(beet.ENOTFOUND, "no such user")
	}
	uerr := h.svc.RemoveUser(r.Context(), p.session.AccountID, p.session.UserID, id)
	if uerr == nil {
		h.redirect(w, r, "/account?done=user-removed#users")
		return nil
	}
	if beet.ErrorCode(uerr) != beet.ECONFLICT {
		return uerr
	}
	v, err := h.account(r, p)
	if err != nil {
		return err
	}
	v.UserErr = formErr(uerr)
	h.render(w, r, http.StatusConflict, "account", v)
	return nil
}

func (h *Handler) saveAccountZone(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	tz := strings.TrimSpace(r.PostFormValue("timezone"))
	zerr := h.svc.SetAccountTimezone(r.Context(), p.session.AccountID, tz)
	if zerr == nil {
		h.redirect(w, r, "/account?done=zone#zone")
		return nil
	}
	if beet.ErrorCode(zerr) != beet.EVALIDATION {
		return zerr
	}
	v, err := h.account(r, p)
	if err != nil {
		return err
	}
	v.ZoneErr, v.Zone = formErr(zerr), tz
	h.render(w, r, http.StatusUnprocessableEntity, "account", v)
	return nil
}

func (h *Handler) changePassword(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	next := r.PostFormValue("new")
	var err error
	if next != r.PostFormValue("new2") {
		err = beet.FieldError("new2", "the two new passwords differ")
	} else {
		err = h.svc.ChangePassword(r.Context(), p.session.UserID, r.PostFormValue("current"), next, p.session.IDHash)
	}
	return h.afterPostAs(w, r, err, "/account?done=password#password", formStatus, showAgain("account",
		func() (*accountView, error) { return h.account(r, p) },
		func(v *accountView) {
			v.PasswordErr = formErr(err)
			if v.PasswordErr.Field == "password" {
				v.PasswordErr.Field = "new" // the service's name for the new password
			}
		}))
}

func (h *Handler) resetBadges(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	if err := h.svc.ResetBadgeKey(r.Context(), p.session.AccountID); err != nil {
		return err
	}
	h.redirect(w, r, "/account?done=badges#badges")
	return nil
}
