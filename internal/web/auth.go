package web

import (
	"net/http"
	"strings"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/httpx"
)

// authView is the data of the setup, sign-in and sign-up pages.
type authView struct {
	layoutView
	Email      string
	Next       string
	Err        *formError
	SignupOpen bool
	Notice     string
}

// maxFormBody bounds every dashboard form.
const maxFormBody = 64 << 10

func parseForm(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
	if err := r.ParseForm(); err != nil {
		return beet.Errorf(beet.EINVALID, "could not read the form: %v", err)
	}
	return nil
}

func (h *Handler) setupForm(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	need, err := h.svc.SetupNeeded(r.Context())
	if err != nil {
		return err
	}
	if !need {
		h.redirect(w, r, "/login")
		return nil
	}
	h.render(w, r, http.StatusOK, "setup", authView{layoutView: h.layout(r, p, "Set up Beet")})
	return nil
}

// SetupPlan is the plan of the account the first-run setup creates. A
// self-hoster owns the disk, so no plan is asked: the first account keeps
// events the longest, and `beet accounts set-plan` shortens it.
const SetupPlan = beet.PlanEnterprise

func (h *Handler) setup(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	v, pw, err := h.newUserForm(w, r, p, "setup", "Set up Beet")
	if v == nil {
		return err
	}
	in, err := h.svc.Setup(r.Context(), v.Email, pw, SetupPlan, strings.TrimSpace(r.PostFormValue("timezone")))
	if beet.ErrorCode(err) == beet.ECONFLICT {
		h.redirect(w, r, "/login")
		return nil
	}
	if beet.ErrorCode(err) == beet.EVALIDATION {
		v.Err = formErr(err)
		h.render(w, r, http.StatusUnprocessableEntity, "setup", *v)
		return nil
	} else if err != nil {
		return err
	}
	h.setCookie(w, r, in.Cookie)
	h.redirect(w, r, "/beets/new?welcome=1")
	return nil
}

func (h *Handler) loginForm(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	if need, err := h.svc.SetupNeeded(r.Context()); err != nil {
		return err
	} else if need {
		h.redirect(w, r, "/setup")
		return nil
	}
	if p.session != nil {
		h.redirect(w, r, safeNext(r.URL.Query().Get("next")))
		return nil
	}
	v := authView{layoutView: h.layout(r, p, "Sign in"), Next: safeNext(r.URL.Query().Get("next")), SignupOpen: h.signupOpen}
	if r.URL.Query().Get("out") == "1" {
		v.Notice = "You are signed out."
	}
	h.render(w, r, http.StatusOK, "login", v)
	return nil
}

func (h *Handler) login(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	v := authView{layoutView: h.layout(r, p, "Sign in"), Email: r.PostFormValue("email"),
		Next: safeNext(r.PostFormValue("next")), SignupOpen: h.signupOpen}
	in, err := h.svc.SignIn(r.Context(), v.Email, r.PostFormValue("password"), h.clientIP(r))
	switch beet.ErrorCode(err) {
	case "":
	case beet.EUNAUTHORIZED, beet.ERATELIMITED:
		v.Err = formErr(err)
		status := http.StatusUnauthorized
		if beet.ErrorCode(err) == beet.ERATELIMITED {
			status = http.StatusTooManyRequests
			httpx.SetRetryAfter(w.Header(), err)
		}
		h.render(w, r, status, "login", v)
		return nil
	default:
		return err
	}
	if c, err := r.Cookie(h.sessionCookie(r)); err == nil && p.session != nil {
		_ = h.svc.SignOut(r.Context(), c.Value) // signing in again ends the old session
	}
	h.setCookie(w, r, in.Cookie)
	h.redirect(w, r, v.Next)
	return nil
}

func (h *Handler) logout(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	if c, err := r.Cookie(h.sessionCookie(r)); err == nil {
		if err := h.svc.SignOut(r.Context(), c.Value); err != nil {
			return err
		}
	}
	h.clearCookie(w, r)
	h.redirect(w, r, "/login?out=1")
	return nil
}

func (h *Handler) signupForm(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	if !h.signupOpen {
		h.renderError(w, r, http.StatusNotFound, "Sign-up is closed on this Beet. Ask someone with an account to add you.")
		return nil
	}
	h.render(w, r, http.StatusOK, "signup", authView{layoutView: h.layout(r, p, "Create an account")})
	return nil
}

func (h *Handler) signup(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	if !h.signupOpen {
		h.renderError(w, r, http.StatusNotFound, "Sign-up is closed on this Beet. Ask someone with an account to add you.")
		return nil
	}
	v, pw, err := h.newUserForm(w, r, p, "signup", "Create an account")
	if v == nil {
		return err
	}
	in, err := h.svc.SignUp(r.Context(), v.Email, pw, h.clientIP(r))
	switch beet.ErrorCode(err) {
	case "":
	case beet.EVALIDATION, beet.ECONFLICT, beet.ERATELIMITED:
		v.Err = formErr(err)
		h.render(w, r, http.StatusUnprocessableEntity, "signup", *v)
		return nil
	default:
		return err
	}
	h.setCookie(w, r, in.Cookie)
	h.redirect(w, r, "/beets/new?welcome=1")
	return nil
}

// newUserForm reads the first-run setup and the sign-up forms: the email,
// and the password typed twice. When the two differ it shows the page
// again with that error and returns no view.
func (h *Handler) newUserForm(w http.ResponseWriter, r *http.Request, p *reqCtx, page, title string) (*authView, string, error) {
	if err := parseForm(w, r); err != nil {
		return nil, "", err
	}
	v := authView{layoutView: h.layout(r, p, title), Email: r.PostFormValue("email")}
	pw := r.PostFormValue("password")
	if pw != r.PostFormValue("password2") {
		v.Err = &formError{Field: "password2", Message: "The two passwords differ."}
		h.render(w, r, http.StatusUnprocessableEntity, page, v)
		return nil, "", nil
	}
	return &v, pw, nil
}

// safeNext keeps a post-sign-in redirect on this site: a path, never
// "//host" or a scheme. Control characters are refused anywhere: browsers
// drop tabs and line breaks from a URL, so "/\t/evil.example" would be
// "//evil.example", another site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || len(next) > 2000 || strings.ContainsFunc(next, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "/"
	}
	if strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	return next
}
