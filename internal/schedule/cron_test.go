package schedule

import "testing"

func TestParseCron(t *testing.T) {
	for _, ok := range []string{"0 2 * * *", "*/5 * * * *", "0 9-18 * * 1-5", "@daily", "@hourly", " 30  4 1 * 0 "} {
		if _, err := ParseCron(ok); err != nil {
			t.Errorf("ParseCron(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "* * * *", "0 0 2 * * * *", "61 * * * *", "0 25 * * *", "a b c d e", "@often"} {
		if _, err := ParseCron(bad); err == nil {
			t.Errorf("ParseCron(%q) = nil, want an error", bad)
		}
	}
	if c, _ := ParseCron("@daily"); c.String() != "0 0 * * *" {
		t.Errorf("@daily normalised to %q", c.String())
	}
}
