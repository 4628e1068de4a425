package sqlstore

import (
	"strings"
	"testing"

	"github.com/beethq/beet"
)

// TestTroubleStatusesSQL: the queries' list of statuses in trouble is the
// domain's, so a status added to beet.TroubleStatuses cannot be alerted on
// in Go and missed by the reminders and status pages in SQL.
func TestTroubleStatusesSQL(t *testing.T) {
	quoted := make([]string, len(beet.TroubleStatuses))
	for i, s := range beet.TroubleStatuses {
		quoted[i] = "'" + string(s) + "'"
		if !s.InTrouble() {
			t.Errorf("%s is in TroubleStatuses but not InTrouble", s)
		}
	}
	if want := "(" + strings.Join(quoted, ", ") + ")"; troubleStatuses != want {
		t.Errorf("troubleStatuses = %s, want %s", troubleStatuses, want)
	}
	for _, s := range beet.Statuses {
		if s.InTrouble() != strings.Contains(troubleStatuses, "'"+string(s)+"'") {
			t.Errorf("%s: InTrouble %v, but the SQL list says otherwise", s, s.InTrouble())
		}
	}
}
