package web

import "testing"

// FuzzDetectionForm reads any detection form as the beet page's form posts
// it. Accepted settings are valid, and showing them in the form again and
// reading that back gives the same settings (minutes and seconds agree).
func FuzzDetectionForm(f *testing.F) {
	for _, s := range []detectionForm{
		{Mode: "auto"},
		{Mode: "period", PeriodMinutes: "60", GraceMinutes: "5"},
		{Mode: "period", PeriodMinutes: "1.5", GraceMinutes: "0.25"},
		{Mode: "period", PeriodMinutes: "1e400", GraceMinutes: "NaN"},
		{Mode: "period", PeriodMinutes: "-0", GraceMinutes: "0x10"},
		{Mode: "cron", Cron: " 0 2 * * * ", Timezone: "Europe/Riga", GraceMinutes: "10"},
		{Mode: "cron", Cron: "@daily", Timezone: "Local"},
		{Mode: "cron", Cron: "0 2 * * *", Timezone: "../../../etc/localtime"},
		{Mode: "hourly"},
	} {
		f.Add(s.Mode, s.PeriodMinutes, s.GraceMinutes, s.Cron, s.Timezone)
	}
	f.Fuzz(func(t *testing.T, mode, period, grace, cron, zone string) {
		in := detectionForm{Mode: mode, PeriodMinutes: period, GraceMinutes: grace, Cron: cron, Timezone: zone}
		d, err := in.detection()
		if err != nil {
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("form %+v accepted as invalid %+v: %v", in, d, err)
		}
		back, err := formOf(d).detection()
		if err != nil || back != d {
			t.Fatalf("form %+v gives %+v; shown again and read back: %+v, %v", in, d, back, err)
		}
	})
}
