package probe

import (
	"fmt"
	"github.com/ratecheck/ratecheck/results"

	"github.com/ratecheck/ratecheck/attack"
)

// WithHTTPSHint adds attack.HTTPSHint to the inconclusive reason (and the
// error) of a probe that was answered but reached no limiter: a plain
// request to an HTTPS port.
func (res *Result) WithHTTPSHint(target string, err error) error {
	if res.Inference.Family != Inconclusive || res.Observation.Stopped != "" || !answeredWithoutDecision(res.Observation.Results) {
		return err
	}
	hint := attack.HTTPSHint(target)
	if hint == "" {
		return err
	}
	res.Inference.Reason += "; " + hint
	if err != nil {
		err = fmt.Errorf("%w; %s", err, hint)
	}
	return err
}

// answeredWithoutDecision says whether something answered (a status, or
// the first bytes of a reply) but none of the answers was an admission or
// a rejection: what a plain request to an HTTPS port gets. A server that
// never answers is left out, so that it does not cost a handshake's
// timeout more.
func answeredWithoutDecision(results []results.Result) bool {
	answered := false
	for i := range results {
		r := &results[i]
		if r.Admitted() || r.Rejected() {
			return false
		}
		answered = answered || r.Status > 0 || r.FirstByte > 0
	}
	return answered
}
