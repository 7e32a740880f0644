package probe

import (
	"github.com/ratecheck/ratecheck/probe/observation"
	"net/url"

	"github.com/ratecheck/ratecheck/probe/bypass"
	"github.com/ratecheck/ratecheck/results"
)

// bypassBase is what the bypass trials of a request to u with method are
// made from. A recorded probe keeps its URL and method in the stream
// header; the rest (cookies, the methods the user allowed) only decides
// which trials run, and a trial that ran is read back by its name.
func bypassBase(method string, u *url.URL, http2, cookie bool, methods []string) bypass.Base {
	if method == "" {
		method = "GET"
	}
	return bypass.Base{Method: method, Target: u.RequestURI(), Cookie: cookie, Methods: methods, TLS: u.Scheme == "https", HTTP2: http2}
}

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

// bypassAnswer is one result as the suite judges it.
func bypassAnswer(r *results.Result, own bool) bypass.Answer {
	a := bypass.Answer{Own: own}
	if r.Error == "" {
		a.Admitted, a.Rejected, a.Status = r.Admitted(), r.Rejected(), r.Status
	}
	return a
}
