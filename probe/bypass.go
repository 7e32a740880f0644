package probe

import (
	"github.com/ratecheck/ratecheck/probe/observation"

	"github.com/ratecheck/ratecheck/probe/bypass"
)

// bypassSuite reads the bypass trials back from the results; nil when none
// ran. The probe's own requests go along: the rejection just before the
// first trial may be the scope trials' last.
func bypassSuite(o *Observation) *bypass.Suite {
	var recs []bypass.Record
	for i := range o.Results {
		r := &o.Results[i]
		if !bypass.IsPhase(r.Phase) && !observation.OwnTraffic(r.Phase, observation.ScopeUntested) {
			continue
		}
		rec := bypass.Record{Seq: r.Seq, Phase: r.Phase, Admitted: r.Error == "" && r.Admitted(), Rejected: r.Error == "" && r.Rejected()}
		if r.Error == "" {
			rec.Status = r.Status
		}
		recs = append(recs, rec)
	}
	return bypass.Read(o.Bypass, recs)
}
