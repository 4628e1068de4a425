// Package backtest replays past events through the live detector code
// (package detect) with a simulated clock, so a person can see which
// alerts some settings would have raised. Deadlines that pass between
// events are applied in time order, exactly as the live sweeper and
// observer apply them, so a backtest and a live beet fed the same events
// give the same flips.
package backtest

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
	"github.com/beethq/beet/internal/ping"
)

// Point is Count events at one instant.
type Point struct {
	At    time.Time
	Count int
}

// Limits on the input: every size has one.
const (
	MaxLineLen = 1024
	MaxPoints  = 10_000_000
	MaxCount   = 1_000_000
)

// Parse reads the CONTRACT §4 input: one line per instant,
// `timestamp[,count]`, the timestamp in RFC 3339 or Unix seconds, count
// defaulting to 1; blank lines and lines starting with # are skipped.
// Points must be in time order. Errors name the line.
func Parse(r io.Reader) ([]Point, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256), MaxLineLen)
	var out []Point
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if len(out) > 0 && p.At.Before(out[len(out)-1].At) {
			return nil, fmt.Errorf("line %d: %s is before the line above; sort the events by time", n, p.At.Format(time.RFC3339))
		}
		if len(out) == MaxPoints {
			return nil, fmt.Errorf("line %d: more than %d events", n, MaxPoints)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return nil, fmt.Errorf("a line is longer than %d bytes", MaxLineLen)
		}
		return nil, err
	}
	return out, nil
}

func parseLine(line string) (Point, error) {
	ts, countText, hasCount := strings.Cut(line, ",")
	ts = strings.TrimSpace(ts)
	p := Point{Count: 1}
	if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
		p.At = t.UTC()
	} else if t, ok, err := unixSeconds(ts); ok {
		if err != nil {
			return p, err
		}
		p.At = t
	} else {
		return p, fmt.Errorf("%.40q is not an RFC 3339 time or Unix seconds (digits, with an optional .fraction)", ts)
	}
	if hasCount {
		c, err := strconv.Atoi(strings.TrimSpace(countText))
		if err != nil || c < 0 || c > MaxCount {
			return p, fmt.Errorf("count %.20q is not a whole number from 0 to %d", strings.TrimSpace(countText), MaxCount)
		}
		p.Count = c
	}
	return p, nil
}

// maxUnixSeconds is the last second RFC 3339 can write, 9999-12-31T23:59:59Z.
const maxUnixSeconds = 253402300799

// unixSeconds reads Unix seconds written as digits, with an optional
// fraction as date +%s.%N prints it, kept to the microsecond. ok is false
// for any other form: a sign, an exponent (1e9, or 1.7672257E+09 from a
// spreadsheet, which has lost the seconds), hex. A time past year 9999 is
// an error: it has no RFC 3339 form, and seconds past 2262 overflowed the
// nanoseconds they were turned into, into 1677 dates.
func unixSeconds(s string) (t time.Time, ok bool, err error) {
	whole, frac, hasFrac := strings.Cut(s, ".")
	if !allDigits(whole) || hasFrac && !allDigits(frac) {
		return time.Time{}, false, nil
	}
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || sec > maxUnixSeconds {
		hint := ""
		if len(whole) >= 13 {
			hint = " (milliseconds? Unix seconds have 10 digits today)"
		}
		return time.Time{}, true, fmt.Errorf("%.40s Unix seconds is after 9999-12-31T23:59:59Z, the last time Beet reads%s", s, hint)
	}
	var ns int64
	for i := range 9 {
		ns *= 10
		if i < len(frac) {
			ns += int64(frac[i] - '0')
		}
	}
	return time.Unix(sec, ns).UTC().Truncate(time.Microsecond), true, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// RunEvents replays a beet's stored events, oldest first, through the
// detector for a beet with b's settings, starting new, as the live commit
// applies them (ping.Apply): job signals too, so a /fail or an exit code
// turns the beet down, and starts and logs do not count as runs. It
// evaluates deadlines up to until and returns the flips in time order.
func RunEvents(b beet.Beet, events []beet.Event, until time.Time) ([]beet.Flip, error) {
	b.Status, b.LastEventAt, b.DueAt, b.Model, b.Runs = beet.StatusNew, nil, nil, nil, beet.Runs{}
	beets := map[int64]*beet.Beet{b.ID: &b}
	var (
		flips []beet.Flip
		err   error
	)
	observe := func(b *beet.Beet, sp beet.EventSpan) []beet.Flip {
		fs, e := detect.ApplyEvents(b, sp)
		err = cmp.Or(err, e)
		return fs
	}
	for i := range events {
		e := events[i]
		e.BeetID, e.Token = b.ID, ""
		_, fs := ping.Apply([]beet.Event{e}, beets, nil, observe)
		if err != nil {
			return nil, err
		}
		flips = append(flips, fs...)
	}
	f, err := detect.ApplyDeadlines(&b, until.Add(time.Nanosecond))
	if err != nil {
		return nil, err
	}
	return append(flips, f...), nil
}

// Run replays points through the detector for a beet with b's settings,
// starting new, and evaluates deadlines up to until (if later than the
// last point). It returns the flips in time order and the beet as the
// replay left it (its status and learned model: what it watches now).
func Run(b beet.Beet, points []Point, until time.Time) ([]beet.Flip, beet.Beet, error) {
	b.Status, b.LastEventAt, b.DueAt, b.Model = beet.StatusNew, nil, nil, nil
	var flips []beet.Flip
	for _, p := range points {
		if p.Count == 0 {
			continue // a bucket with no events is just time passing
		}
		f, err := detect.ApplyEvents(&b, beet.EventSpan{First: p.At, Last: p.At, Count: p.Count})
		if err != nil {
			return nil, b, err
		}
		flips = append(flips, f...)
	}
	f, err := detect.ApplyDeadlines(&b, until.Add(time.Nanosecond))
	if err != nil {
		return nil, b, err
	}
	flips = append(flips, f...)
	return flips, b, nil
}
