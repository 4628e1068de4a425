package beet_test

import (
	"testing"
	"time"

	"github.com/beethq/beet"
)

func TestRetentionCutoff(t *testing.T) {
	now := time.Date(2028, 3, 1, 12, 0, 0, 0, time.UTC) // 2028 is a leap year
	for _, tc := range []struct {
		plan beet.Plan
		want time.Time
	}{
		{beet.PlanFree, now.Add(-720 * time.Hour)},
		{beet.PlanStarter, time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)},
		{beet.PlanPro, time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)},
		{beet.PlanEnterprise, time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)},
	} {
		if got := tc.plan.RetentionCutoff(now); !got.Equal(tc.want) {
			t.Errorf("%s: cutoff %v, want %v", tc.plan, got, tc.want)
		}
	}
}

// On a leap day a year back is February 28: the cutoff keeps a day more,
// never a day less.
func TestRetentionCutoffFromALeapDay(t *testing.T) {
	now := time.Date(2028, 2, 29, 12, 0, 0, 0, time.UTC)
	if got, want := beet.PlanStarter.RetentionCutoff(now), time.Date(2027, 2, 28, 12, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("starter on 2028-02-29: cutoff %v, want %v", got, want)
	}
	if got, want := beet.PlanPro.RetentionCutoff(now), time.Date(2025, 2, 28, 12, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("pro on 2028-02-29: cutoff %v, want %v", got, want)
	}
	if got, want := beet.PlanPro.RetentionCutoff(time.Date(2032, 2, 29, 0, 0, 0, 0, time.UTC)), time.Date(2029, 2, 28, 0, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("pro on 2032-02-29: cutoff %v, want %v", got, want)
	}
}

func TestParsePlan(t *testing.T) {
	if p, err := beet.ParsePlan("plan", "pro"); err != nil || p != beet.PlanPro {
		t.Fatalf("ParsePlan(pro) = %v, %v", p, err)
	}
	_, err := beet.ParsePlan("plan", "gold")
	if beet.ErrorCode(err) != beet.EVALIDATION || beet.ErrorField(err) != "plan" {
		t.Fatalf("ParsePlan(gold) error = %v, want validation error on plan", err)
	}
}
