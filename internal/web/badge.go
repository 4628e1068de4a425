package web

import (
	"fmt"
	"html"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/beethq/beet"
)

// badgeColours are the badge's right half per status (the dashboard's
// status colours, dark enough for white text).
var badgeColours = map[beet.Status]string{
	beet.StatusUp: "#146c2e", beet.StatusDown: "#a51d2d", beet.StatusAnomalous: "#8a4b00",
	beet.StatusLearning: "#1a4f8a", beet.StatusNew: "#4a4650", beet.StatusPaused: "#5e4a00",
}

// serveBadge answers /badge/{id}.svg without a session: the ID is the
// credential (see service.BadgeFor). An unknown, forged or retired ID is a
// plain 404 that says nothing about why.
func (h *Handler) serveBadge(w http.ResponseWriter, r *http.Request) {
	id, ok := strings.CutSuffix(r.PathValue("file"), ".svg")
	if !ok {
		http.NotFound(w, r)
		return
	}
	b, err := h.svc.BadgeFor(r.Context(), id)
	if beet.IsNotFound(err) {
		http.NotFound(w, r)
		return
	} else if err != nil {
		h.log.ErrorContext(r.Context(), "badge failed", "err", err)
		http.Error(w, "badge unavailable", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	// Short: a README's badge should follow the state within a minute.
	w.Header().Set("Cache-Control", "public, max-age=60")
	w.Header().Set("Cross-Origin-Resource-Policy", "cross-origin")
	w.Write([]byte(badgeSVG(b.Label, statusWords(b.Status), badgeColours[b.Status])))
}

// badgeSVG draws a two-part badge; widths come from a rough 7 px per
// character, which is what such badges do without font metrics.
func badgeSVG(label, status, colour string) string {
	if utf8.RuneCountInString(label) > 40 {
		label = string([]rune(label)[:39]) + "…"
	}
	lw := 12 + 7*utf8.RuneCountInString(label)
	sw := 12 + 7*utf8.RuneCountInString(status)
	l, s := html.EscapeString(label), html.EscapeString(status)
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="20" role="img" aria-label="%s: %s">`+
		`<title>%s: %s</title><rect width="%d" height="20" fill="#4a4650"/><rect x="%d" width="%d" height="20" fill="%s"/>`+
		`<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" text-anchor="middle">`+
		`<text x="%d" y="14">%s</text><text x="%d" y="14">%s</text></g></svg>`,
		lw+sw, l, s, l, s, lw, lw, sw, colour, lw/2, l, lw+sw/2, s)
}
