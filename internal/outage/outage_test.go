package outage

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A run of failures is one line, its end one more with the count and the
// length; a failure while stopping is no outage.
func TestNoteLogsAnOutageTwice(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	step := Step{Failed: "step failed", Recovered: "step works again"}
	var o Log
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	for i := range 30 {
		if o.Note(ctx, log, t0.Add(time.Duration(i)*time.Second), step, errors.New("connection refused")) {
			t.Fatal("a failed try reported as working")
		}
	}
	if !o.Note(ctx, log, t0.Add(30*time.Second), step, nil) {
		t.Fatal("a working try reported as failed")
	}
	o.Note(ctx, log, t0.Add(31*time.Second), step, nil)
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	o.Note(stopped, log, t0.Add(32*time.Second), step, context.Canceled)

	out := buf.String()
	if n := strings.Count(out, `msg="step failed"`); n != 1 {
		t.Errorf("%d failure lines for one outage; want 1:\n%s", n, out)
	}
	if !strings.Contains(out, `level=ERROR msg="step failed" err="connection refused"`) {
		t.Errorf("the failure line lacks its level or error:\n%s", out)
	}
	if n := strings.Count(out, `msg="step works again" failures=30 for=30s`); n != 1 {
		t.Errorf("%d recovery lines with the count and length; want 1:\n%s", n, out)
	}
	if strings.Count(out, "\n") != 2 {
		t.Errorf("want exactly two lines:\n%s", out)
	}
}
