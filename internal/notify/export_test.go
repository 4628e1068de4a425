package notify

// SetPagerDutyURL points s at a test receiver instead of PagerDuty.
func SetPagerDutyURL(s *Sender, u string) { s.pagerDutyURL = u }
