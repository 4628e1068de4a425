package schedule

import (
	"testing"
	"time"
)

func TestDescribe(t *testing.T) {
	riga, ny := mustLoc(t, "Europe/Riga"), mustLoc(t, "America/New_York")
	cases := []struct {
		expr string
		loc  *time.Location
		want string
	}{
		{"0 2 * * *", riga, "every day at 02:00 Europe/Riga"},
		{"@daily", time.UTC, "every day at 00:00 UTC"},
		{"0 * * * *", riga, "every hour at :00"},
		{"@hourly", riga, "every hour at :00"},
		{"15 * * * *", ny, "every hour at :15"},
		{"*/15 * * * *", riga, "every 15 minutes"},
		{"0,30 * * * *", riga, "every 30 minutes"},
		{"* * * * *", riga, "every minute"},
		{"0 */2 * * *", riga, "every 2 hours at :00 Europe/Riga"},
		{"0 9 * * 1-5", ny, "weekdays at 09:00 America/New_York"},
		{"0 9 * * mon-fri", ny, "weekdays at 09:00 America/New_York"},
		{"30 6 * * 1", time.UTC, "Mondays at 06:30 UTC"},
		{"30 6 * * 1", nil, "Mondays at 06:30 UTC"},
		{"0 10 * * 6,0", riga, "weekends at 10:00 Europe/Riga"},
		{"0 8 * * 1,3,5", riga, "Mondays, Wednesdays and Fridays at 08:00 Europe/Riga"},
		{"0 8 * * 2,4", riga, "Tuesdays and Thursdays at 08:00 Europe/Riga"},
		{"0 12 * * 1-7", riga, "every day at 12:00 Europe/Riga"},
		{"@monthly", time.UTC, "on the 1st of every month at 00:00 UTC"},
		{"0 3 22 * *", riga, "on the 22nd of every month at 03:00 Europe/Riga"},
		{"0 3 13 * *", riga, "on the 13th of every month at 03:00 Europe/Riga"},
		// Anything else is shown as written, with the zone.
		{"*/7 * * * *", riga, "on the schedule `*/7 * * * *` in Europe/Riga"}, // 7 does not divide the hour
		{"0 9-17 * * 1-5", ny, "on the schedule `0 9-17 * * 1-5` in America/New_York"},
		// The day fields join as in Vixie cron: and when one starts with *.
		{"0 0 13 * 5", riga, "on the 13th of every month and on Fridays at 00:00 Europe/Riga"},
		{"0 9 1-7 * 1", riga, "on the 1st to the 7th of every month and on Mondays at 09:00 Europe/Riga"},
		{"0 3 */2 * 1-5", riga, "weekdays that fall on odd days of the month at 03:00 Europe/Riga"},
		{"0 3 */2 * *", riga, "on odd days of every month at 03:00 Europe/Riga"},
		{"0 3 * * */2", riga, "Tuesdays, Thursdays, Saturdays and Sundays at 03:00 Europe/Riga"},
		{"0 3 1-31 * 5", riga, "every day at 03:00 Europe/Riga"},
		{"0 3 ? * 5", riga, "Fridays at 03:00 Europe/Riga"},
		{"0 3 */3 * 1-5", riga, "on the schedule `0 3 */3 * 1-5` in Europe/Riga"},
		{"0 0 1 1 *", riga, "on the schedule `0 0 1 1 *` in Europe/Riga"},
		{"0 12 L * *", riga, "on the schedule `0 12 L * *` in Europe/Riga"},
		{"0 */5 * * *", riga, "on the schedule `0 */5 * * *` in Europe/Riga"},
	}
	for _, tc := range cases {
		if got := mustCron(t, tc.expr).Describe(tc.loc); got != tc.want {
			t.Errorf("Describe(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}
