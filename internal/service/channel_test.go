package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/service"
)

func TestMaintenanceCovers(t *testing.T) {
	riga, _ := time.LoadLocation("Europe/Riga")
	at := func(s string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04", s, riga)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// Every day 03:00-04:00 Riga time, across the spring-forward night
	// (2021-03-28 03:00 → 04:00: the slot moves to just after the gap).
	daily := &beet.MaintenanceWindow{Cron: "0 3 * * *", Timezone: "Europe/Riga", Duration: time.Hour}
	start, end := at("2026-05-01 10:00"), at("2026-05-01 11:00")
	once := &beet.MaintenanceWindow{Start: &start, End: &end}
	for _, c := range []struct {
		w    *beet.MaintenanceWindow
		t    time.Time
		want bool
	}{
		{daily, at("2021-03-27 02:59"), false},
		{daily, at("2021-03-27 03:00"), true},
		{daily, at("2021-03-27 03:59"), true},
		{daily, at("2021-03-27 04:00"), false},
		{daily, at("2021-03-28 04:30"), true}, // the gap night: slot at 04:00 EEST
		{daily, at("2021-03-28 05:00"), false},
		{once, start.Add(-time.Second), false},
		{once, start, true},
		{once, end.Add(-time.Microsecond), true},
		{once, end, false},
	} {
		if got := service.Covers(c.w, c.t); got != c.want {
			t.Errorf("Covers(%s %v, %s) = %v, want %v", c.w.Cron, c.w.Start, c.t, got, c.want)
		}
	}
}

func TestInMaintenance(t *testing.T) {
	svc, _ := openService(t, service.Options{})
	ctx := context.Background()
	a, _, err := svc.CreateAccount(ctx, "m@example.com", "password1", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: "one"})
	b2, _ := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: "two"})
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Hour)
	if err := svc.CreateMaintenance(ctx, a.ID, &beet.MaintenanceWindow{BeetID: b1.ID, Start: &t0, End: &t1}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		beet *beet.Beet
		t    time.Time
		want bool
	}{{b1, t0, true}, {b2, t0, false}, {b1, t1, false}} {
		if got, err := svc.InMaintenance(ctx, c.beet.ID, c.t); err != nil || got != c.want {
			t.Errorf("InMaintenance(%s, %s) = %v, %v; want %v", c.beet.Name, c.t, got, err, c.want)
		}
	}
	// An account-wide window covers every beet.
	if err := svc.CreateMaintenance(ctx, a.ID, &beet.MaintenanceWindow{Cron: "0 * * * *", Timezone: "UTC", Duration: 5 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	if got, _ := svc.InMaintenance(ctx, b2.ID, t1.Add(4*time.Minute)); !got {
		t.Error("the account-wide window does not cover beet two")
	}
}
