package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
)

// signalWords says what an event reported, for the event log: "" for a
// plain ping, else the run's result in words: "started", "succeeded in
// 2.5 s", "failed with exit code 3 after 41 s", "log".
func signalWords(e *beet.Event) string {
	k := e.Kind.Normal()
	if k == beet.KindPing && e.ExitCode == nil && e.Duration == nil {
		return ""
	}
	switch k {
	case beet.KindStart:
		return "started"
	case beet.KindLog:
		return "log"
	}
	var s string
	if k == beet.KindFail {
		s = "failed"
		if e.ExitCode != nil {
			s += fmt.Sprintf(" with exit code %d", *e.ExitCode)
		}
		if e.Duration != nil {
			s += " after " + detect.Duration(*e.Duration)
		}
		return s
	}
	s = "succeeded"
	if e.Duration != nil {
		s += " in " + detect.Duration(*e.Duration)
	}
	if e.ExitCode != nil && *e.ExitCode != 0 {
		s += fmt.Sprintf(" (exit code %d)", *e.ExitCode)
	}
	return s
}

// clip keeps the first 120 characters of a message for a table cell.
func clip(s string) string {
	r := []rune(s)
	if len(r) <= 120 {
		return s
	}
	return string(r[:120]) + "…"
}

// oldTokenLine tells a person that a rotated token is still in use:
// "The old token bt_AbCd… (rotated 2026-05-01 12:00 UTC) was used 14 times
// since rotation, last from 10.0.0.7 at 2026-05-01 13:05 UTC."
func oldTokenLine(t *beet.RotatedToken, tz string) string {
	loc, err := time.LoadLocation(tz)
	if err != nil {
		loc = time.UTC
	}
	const layout = "2006-01-02 15:04 MST"
	line := fmt.Sprintf("The old token %s (rotated %s) was used %s since rotation",
		t.Prefix, t.RotatedAt.In(loc).Format(layout), plural(int(t.Hits), "time"))
	if t.LastHitAt != nil {
		line += ", last"
		if t.LastAddr != "" {
			line += " from " + t.LastAddr
		}
		line += " at " + t.LastHitAt.In(loc).Format(layout)
	}
	return line + ". Nothing was recorded: give that job the new URL."
}

// unknownTokensView is the page of recent requests whose token matched no
// beet on this instance.
type unknownTokensView struct {
	layoutView
	Tokens []unknownRow
	// Full is true on a single-account installation: the one account runs
	// it, and sees client addresses and user agents. With several
	// accounts these requests belong to nobody's beet, so their clients
	// are nobody's to see: shape, prefix and counts only.
	Full bool
}

// unknownRow is one unknown token, with the viewer's beet it was probably
// meant for (MeantName is "" when none).
type unknownRow struct {
	beet.UnknownToken
	MeantName string
}

// unknownFor is the recent unknown tokens the account may see: likely
// typos matched against its own beets' tokens (never shown), old tokens
// of its own beets, and, on a single-account installation, all the rest.
// With several accounts the rest is left out (a typo of another account's
// token starts as that token does, and the requests are that account's
// business), and clients are shown only for the account's own old tokens.
func (h *Handler) unknownFor(ctx context.Context, accountID int64) (rows []unknownRow, full bool, err error) {
	if h.unknownTokens == nil {
		return nil, false, nil
	}
	tokens := h.unknownTokens(h.svc.TokenMatcher(ctx, accountID))
	if len(tokens) == 0 {
		return nil, false, nil
	}
	if full, err = h.svc.SingleAccount(ctx); err != nil {
		return nil, false, err
	}
	names := map[int64]string{}
	for _, t := range tokens {
		if t.BeetID == 0 {
			if full {
				rows = append(rows, unknownRow{UnknownToken: t})
			}
			continue
		}
		name, ok := names[t.BeetID]
		if !ok {
			b, err := h.svc.Beet(ctx, accountID, t.BeetID)
			switch {
			case beet.IsNotFound(err): // another account's old token, or a beet deleted since
			case err != nil:
				return nil, false, err
			default:
				name = b.Name
			}
			names[t.BeetID] = name
		}
		if name == "" {
			if !full {
				continue // another account's beet: theirs to see
			}
			t.BeetID, t.Rotated = 0, false
		}
		if !full && !t.Rotated {
			t.Addr, t.UserAgent = "", "" // a likely typo is not certainly the account's
		}
		rows = append(rows, unknownRow{UnknownToken: t, MeantName: name})
	}
	return rows, full, nil
}

func (h *Handler) unknownTokensPage(w http.ResponseWriter, r *http.Request, p *reqCtx) error {
	v := &unknownTokensView{layoutView: h.layout(r, p, "Unknown tokens")}
	var err error
	if v.Tokens, v.Full, err = h.unknownFor(r.Context(), p.session.AccountID); err != nil {
		return err
	}
	if v.Tokens == nil {
		if v.Full, err = h.svc.SingleAccount(r.Context()); err != nil {
			return err
		}
	}
	h.render(w, r, http.StatusOK, "unknown_tokens", v)
	return nil
}

// unknownBannerWindow is how recent an unknown token must be for the beet
// list to mention it.
const unknownBannerWindow = 24 * time.Hour

// unknownBanner is the beet list's note on recent unknown tokens.
type unknownBanner struct {
	Tokens int          // unknown tokens used in the window
	Meant  []unknownRow // those probably meant for one of the viewer's beets
}

// unknownBannerFor says whether requests with unknown tokens arrived in the
// last 24 hours that the account should hear of: on a single-account
// installation any; with several, those meant for one of its beets (a
// typo or an old token), since the rest belong to nobody's account.
func (h *Handler) unknownBannerFor(ctx context.Context, accountID int64) (*unknownBanner, error) {
	rows, full, err := h.unknownFor(ctx, accountID)
	if err != nil {
		return nil, err
	}
	since := h.svc.Now().Add(-unknownBannerWindow)
	var b unknownBanner
	for _, row := range rows {
		if row.Last.Before(since) || !full && row.MeantName == "" {
			continue
		}
		b.Tokens++
		if row.MeantName != "" {
			b.Meant = append(b.Meant, row)
		}
	}
	if b.Tokens == 0 {
		return nil, nil
	}
	return &b, nil
}

// wrapperSnippet is the shell wrapper that reports a job's start, end and
// exit code.
const wrapperSnippet = `curl -fsS -m 10 --retry 3 "URL/start" > /dev/null
/path/to/job
curl -fsS -m 10 --retry 3 "URL/$?" > /dev/null`

// runtimeMinutes formats max_runtime_seconds for the detection form.
func runtimeMinutes(s int64) string {
	if s <= 0 {
		return ""
	}
	return strings.TrimSuffix(fmt.Sprintf("%g", float64(s)/60), ".0")
}
