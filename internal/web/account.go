package web

import (
	"net/http"
	"strconv"

	"github.com/beethq/beet"
)

type accountView struct {
	layoutView
	Account   *beet.Account
	Keys      []*beet.APIKey
	Users     []*beet.User
	Channels  []channelRow
	Windows   []windowRow
	NewKey    string // shown once, right after creation
	NewKeyFor string
	KeyErr    *formError
	UserErr   *formError
	UserEmail string
	Notice    string
	BaseURL   string
}

func (h *Handler) account(r *http.Request, p *reqCtx) (*accountView, error) {
	ctx, acc := r.Context(), p.session.AccountID
	v := &accountView{layoutView: h.layout(r, p, "Account"), BaseURL: h.baseURL}
	var err error
	if v.Account, err = h.svc.Account(ctx, acc); err != nil {
		return nil, err
	}
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
	return v, nil
}

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
	case "window":
		v.Notice = "The maintenance window is added."
	case "window-deleted":
		v.Notice = "The maintenance window is deleted."
	case "channel-deleted":
		v.Notice = "The channel is deleted: alerts no longer go to it."
	}
	h.render(w, r, http.StatusOK, "account", v)
	return nil
}

// createKey answers with the page itself rather than a redirect: the new
// key is shown this once and never stored in plain text.
func (h *Handler) createKey(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	name := r.PostFormValue("name")
	_, key, kerr := h.svc.CreateAPIKey(r.Context(), p.session.AccountID, name)
	if kerr != nil && beet.ErrorCode(kerr) != beet.EVALIDATION {
		return kerr
	}
	v, err := h.account(r, p)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if kerr != nil {
		v.KeyErr, status = formErr(kerr), http.StatusUnprocessableEntity
	} else {
		v.NewKey, v.NewKeyFor = key, name
	}
	h.render(w, r, status, "account", v)
	return nil
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
	_, uerr := h.svc.AddUser(r.Context(), p.session.AccountID, email, r.PostFormValue("password"))
	if uerr == nil {
		h.redirect(w, r, "/account?done=user#users")
		return nil
	}
	if c := beet.ErrorCode(uerr); c != beet.EVALIDATION && c != beet.ECONFLICT {
		return uerr
	}
	v, err := h.account(r, p)
	if err != nil {
		return err
	}
	v.UserErr, v.UserEmail = formErr(uerr), email
	h.render(w, r, http.StatusUnprocessableEntity, "account", v)
	return nil
}
