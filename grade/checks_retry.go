package grade

import (
	"fmt"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/headers"
)

// checkRetryAfterPresent: RFC 6585 §4 lets a 429 carry Retry-After and RFC
// 9110 §10.2.3 gives it to 503; without it a client can only guess, and
// naive clients retry at once (the retry storm of seeds 000 and 002).
func checkRetryAfterPresent(v *view) verdict {
	rej := v.rejections()
	if len(rej) == 0 {
		return skip(noRejection)
	}
	var missing, with []*res
	for _, r := range rej {
		if _, ok := r.Headers["retry-after"]; ok {
			with = append(with, r)
		} else {
			missing = append(missing, r)
		}
	}
	const hint = "send Retry-After: <seconds until the same request would be admitted>, rounded up"
	switch {
	case len(missing) == 0:
		return verdict{outcome: Pass, actual: fmt.Sprintf("all %d rejections carry Retry-After", len(rej)), seqs: seqs(rej, 3)}
	case len(with) == 0:
		return verdict{outcome: Fail, actual: fmt.Sprintf("none of %d rejections carries Retry-After", len(rej)), hint: hint, seqs: seqs(missing, maxSeqs)}
	}
	return verdict{outcome: Warn, actual: fmt.Sprintf("%d of %d rejections lack Retry-After", len(missing), len(rej)), hint: hint, seqs: seqs(missing, maxSeqs)}
}

// parsedRA is a rejection's Retry-After, when it parses.
type parsedRA struct {
	r  *res
	ra headers.RetryAfter
}

func (v *view) retryAfters() (ok []parsedRA, bad []*res, errs []error) {
	for _, r := range v.rejections() {
		val, has := r.Headers["retry-after"]
		if !has {
			continue
		}
		ra, err := headers.ParseRetryAfter(val, r.date)
		if err != nil {
			bad, errs = append(bad, r), append(errs, err)
			continue
		}
		ok = append(ok, parsedRA{r, ra})
	}
	return ok, bad, errs
}

// checkRetryAfterValid: Retry-After = HTTP-date / delay-seconds, and a
// sender must produce the IMF-fixdate form of a date (RFC 9110 §10.2.3,
// §5.6.7). A date is valid and accepted; a decimal, a unit, a sign or a date
// in UTC instead of GMT is not.
func checkRetryAfterValid(v *view) verdict {
	ok, bad, errs := v.retryAfters()
	if len(ok)+len(bad) == 0 {
		return skip("no rejection carried Retry-After")
	}
	if len(bad) > 0 {
		return verdict{outcome: Fail, actual: fmt.Sprintf("%d of %d Retry-After values are invalid; e.g. %v", len(bad), len(ok)+len(bad), errs[0]),
			hint: "send whole seconds (1*DIGIT) or an IMF-fixdate such as Sun, 06 Nov 1994 08:49:37 GMT (Go: http.TimeFormat)", seqs: seqs(bad, maxSeqs)}
	}
	var dubious []*res
	first := ""
	forms := map[string]int{}
	for _, p := range ok {
		forms[p.ra.Form]++
		if len(p.ra.Findings) > 0 {
			dubious = append(dubious, p.r)
			if first == "" {
				first = fmt.Sprintf("%q: %s", p.r.Headers["retry-after"], strings.Join(p.ra.Findings, "; "))
			}
		}
	}
	formText := fmt.Sprintf("%d delay-seconds, %d HTTP-date", forms[headers.RetryAfterDelay], forms[headers.RetryAfterDate])
	if len(dubious) > 0 {
		return verdict{outcome: Warn, actual: fmt.Sprintf("%d values valid (%s) but %d dubious; e.g. %s", len(ok), formText, len(dubious), first), seqs: seqs(dubious, maxSeqs)}
	}
	a := fmt.Sprintf("%d values valid (%s)", len(ok), formText)
	if forms[headers.RetryAfterDate] > 0 {
		a += "; an IMF-fixdate is as valid as delay-seconds"
	}
	return verdict{outcome: Pass, actual: a, seqs: seqs(rej(ok), 3)}
}

func rej(ps []parsedRA) []*res {
	out := make([]*res, len(ps))
	for i, p := range ps {
		out[i] = p.r
	}
	return out
}

// checkRetryAfterAccurate grades Retry-After against what happened next in
// the run, for each rejection R of a key that said to wait d:
//
//   - too short: nothing of the key was admitted between R and R+d (so the
//     client itself used no capacity meanwhile), and the first request sent
//     at or after R+d (measured from R's response) was rejected anyway;
//   - too long: the first admission of the key sent after R's response came
//     after a real wait w with d > 2w and d − w beyond the rounding of
//     whole seconds (1 s; 2 s for a date, read against a Date header of
//     one-second resolution).
//
// The real wait is an upper bound on the truth (the probe samples), so a
// "too long" is never a sampling artefact.
func checkRetryAfterAccurate(v *view) verdict {
	ok, _, _ := v.retryAfters()
	if len(ok) == 0 {
		return skip("no valid Retry-After to check")
	}
	tested, short, long := 0, 0, 0
	var seqsShort, seqsLong []int
	var exShort, exLong string
	var exOK string
	for _, p := range ok {
		r := p.r
		if p.ra.Form == headers.RetryAfterDate && r.date.IsZero() {
			continue // a date without a Date header: no delay to test
		}
		d := p.ra.Delay
		at := r.Done + d
		var firstAdmit, firstAt *res
		for _, n := range v.rs {
			if n.Key != r.Key || n.Sent < r.Done {
				continue
			}
			if firstAdmit == nil && n.Admitted() {
				firstAdmit = n
			}
			if firstAt == nil && n.Sent >= at {
				firstAt = n
			}
			if firstAdmit != nil && firstAt != nil {
				break
			}
		}
		switch {
		case firstAdmit != nil && firstAdmit.Sent < at:
			// Capacity came back before Retry-After said: how much before?
			tested++
			real := firstAdmit.Sent - r.Done
			tol := time.Second + 2*v.obs.RTT + 5*time.Millisecond
			if p.ra.Form == headers.RetryAfterDate {
				tol += time.Second
			}
			if d > 2*real && d-real > tol {
				long++
				seqsLong = addSeq(seqsLong, r.Seq, firstAdmit.Seq)
				if exLong == "" {
					exLong = fmt.Sprintf("seq %d said %s; seq %d was admitted %s after it", r.Seq, secs(d), firstAdmit.Seq, secs(real))
				}
			} else if exOK == "" {
				exOK = fmt.Sprintf("seq %d said %s; the first admission came %s later", r.Seq, secs(d), secs(real))
			}
		case firstAt != nil:
			tested++
			if firstAt.Rejected() {
				short++
				seqsShort = addSeq(seqsShort, r.Seq, firstAt.Seq)
				if exShort == "" {
					exShort = fmt.Sprintf("seq %d said %s; seq %d, sent %s after it with nothing admitted in between, was rejected",
						r.Seq, secs(d), firstAt.Seq, secs(firstAt.Sent-r.Done))
				}
			} else if exOK == "" {
				exOK = fmt.Sprintf("seq %d said %s; seq %d sent then was admitted", r.Seq, secs(d), firstAt.Seq)
			}
		}
	}
	if tested == 0 {
		return skip("no rejection was followed by an admission or by a request at its Retry-After time")
	}
	switch {
	case short > 0:
		return verdict{outcome: Fail, actual: fmt.Sprintf("too short for %d of %d rejections tested: %s", short, tested, exShort),
			hint: "compute Retry-After from the limiter's state (time until the same request would pass) and round up", seqs: seqsShort,
			capWhy: "Retry-After too short"}
	case long > 0:
		return verdict{outcome: Fail, actual: fmt.Sprintf("more than twice the real wait for %d of %d rejections tested: %s", long, tested, exLong),
			hint: "compute Retry-After from the limiter's state rather than a fixed or worst-case value", seqs: seqsLong,
			capWhy: "Retry-After far too long"}
	}
	return verdict{outcome: Pass, actual: fmt.Sprintf("accurate for all %d rejections tested; e.g. %s", tested, exOK), seqs: seqs(rej(ok), 3)}
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
