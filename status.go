package beet

// Status is where a beet stands (CONTRACT §2).
type Status string

const (
	StatusNew       Status = "new"       // no event yet
	StatusLearning  Status = "learning"  // auto mode, baseline not yet known
	StatusUp        Status = "up"        // events arrive as expected
	StatusDown      Status = "down"      // events stopped: silence
	StatusAnomalous Status = "anomalous" // events arrive, but the rate is far from normal
	StatusPaused    Status = "paused"    // records events, raises no alerts
)

// Statuses lists every status.
var Statuses = []Status{StatusNew, StatusLearning, StatusUp, StatusDown, StatusAnomalous, StatusPaused}

// TroubleStatuses are the statuses of a beet in trouble: alerted on, kept
// first on a status page, what a recovery leaves.
var TroubleStatuses = []Status{StatusDown, StatusAnomalous}

// InTrouble reports whether s is down or anomalous.
func (s Status) InTrouble() bool { return s == StatusDown || s == StatusAnomalous }

// Valid reports whether s is a known status.
func (s Status) Valid() bool {
	for _, t := range Statuses {
		if s == t {
			return true
		}
	}
	return false
}
