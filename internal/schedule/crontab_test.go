package schedule

import "testing"

// TestCrontab: what Debian's cron (entry.c) takes as Beet reads it, and
// what only Beet's schedule field takes.
func TestCrontab(t *testing.T) {
	for _, ok := range []string{"0 2 * * *", "*/5 * * * *", "30 6 * * 1-5", "0 9-17/2 * * mon-fri", "0 0 1 jan *",
		"0 0 * * 7", "0 0 * * 5-7", "15 3 */2 * 1-5", "0 0,12 1,15 * *", "@daily", "@hourly", "0 0 * * SUN"} {
		if !Crontab(ok) {
			t.Errorf("Crontab(%q) = false, want true", ok)
		}
	}
	for _, bad := range []string{"0 12 L * *", "0 12 LW * *", "0 12 15W * *", "0 9 * * MON#1", "0 9 * * 1#1", "0 9 * * 5L",
		"0 9 ? * 1", "0 9 * * monday", "0 0 1 january *", "5/10 * * * *", "0 9 * * fri-sun", "@DAILY", "@reboot",
		"0 25 * * *", "CRON_TZ=Europe/Riga 0 2 * * *", "0 2 * * * *", ""} {
		if Crontab(bad) {
			t.Errorf("Crontab(%q) = true, want false", bad)
		}
	}
}
