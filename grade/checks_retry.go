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

// checkRetryAfterAccurate grades Retry-After as a client that obeys it
// sees it. Every value a forgiving client can read counts (a fraction, a
// date in UTC), whatever retry-after.valid says of its format. For each
// rejection R of a key that said to wait until T (R's completion plus the
// delay; a date as the instant it names — the target is on this machine, so
// its clock is ours):
//
//   - a silent wait tests it: the key's next request N went out at or
//     after T with nothing sent on the key in between and nothing in
//     flight. N rejected: too short. The probe plans such waits
//     (probe/plan/silent.go); any other gap of that kind counts as well.
//   - too long: the first admission of the key sent after R came after a
//     real wait w (at most from R's send to that admission's answer) with
//     T − R > 2w and beyond the rounding of whole seconds (1 s; 2 s for a
//     date). Sampling only overstates w, so this is never an artefact;
//     knocking cannot make it either.
//
// A request at or after T that was rejected after the key kept sending in
// between is no test: a limiter that counts rejected attempts (a window
// restarted by each over-limit request) extends its lockout because of the
// knocking. That is reported as a fact about the limiter, not a defect of
// the header.
func checkRetryAfterAccurate(v *view) verdict {
	tested, silent, short, long, lenient := 0, 0, 0, 0, 0
	var seqsShort, seqsLong []int
	var exShort, exLong, exOK, exLockout string
	lockouts := 0
	seen := false
	for i, r := range v.rs {
		if !r.Rejected() || !r.hasRA {
			continue
		}
		seen = true
		d, at, ok := v.retryWait(r)
		if !ok {
			continue
		}
		if r.raLenient {
			lenient++
		}
		n := v.silentNext(i)
		if n != nil && v.abs(n.Sent).Compare(at) >= 0 {
			tested++
			silent++
			if n.Rejected() {
				short++
				seqsShort = addSeq(seqsShort, r.Seq, n.Seq)
				if exShort == "" {
					exShort = fmt.Sprintf("seq %d said %s; seq %d, sent %s after it with nothing sent on the key in between, was rejected",
						r.Seq, raText(r, d), n.Seq, secs(n.Sent-r.Done))
				}
			} else if exOK == "" {
				exOK = fmt.Sprintf("seq %d said %s; seq %d, sent in silence %s after it, was admitted", r.Seq, raText(r, d), n.Seq, secs(n.Sent-r.Done))
			}
			continue
		}
		// Not silent: what did capacity do meanwhile?
		var firstAdmit, firstAt *res
		knocks := 0
		for _, m := range v.rs[i+1:] {
			if m.Key != r.Key || m.Sent < r.Done {
				continue
			}
			if firstAdmit == nil && m.Admitted() {
				firstAdmit = m
			}
			if firstAt == nil && v.abs(m.Sent).Compare(at) >= 0 {
				firstAt = m
			}
			if firstAt == nil && firstAdmit == nil {
				knocks++
			}
			if firstAdmit != nil && firstAt != nil {
				break
			}
		}
		switch {
		case firstAdmit != nil && v.abs(firstAdmit.Sent).Before(at):
			tested++
			// The real wait is at most from R's send to the admission's
			// answer (both decisions lie inside those round trips): an
			// upper bound, so a loaded machine's slow answers cannot make
			// an honest value look too long.
			real := firstAdmit.Done - r.Sent
			tol := time.Second + 5*time.Millisecond
			if r.ra.Form == headers.RetryAfterDate {
				tol += time.Second
			}
			if d > 2*real && d-real > tol {
				long++
				seqsLong = addSeq(seqsLong, r.Seq, firstAdmit.Seq)
				if exLong == "" {
					exLong = fmt.Sprintf("seq %d said %s; seq %d was admitted %s after it", r.Seq, raText(r, d), firstAdmit.Seq, secs(real))
				}
			} else if exOK == "" {
				exOK = fmt.Sprintf("seq %d said %s; the first admission came %s later", r.Seq, raText(r, d), secs(real))
			}
		case firstAt != nil && firstAt.Rejected() && knocks > 0:
			lockouts++
			if exLockout == "" {
				exLockout = fmt.Sprintf("seq %d said %s; seq %d, sent %s after it following %d requests on the key in between, was rejected",
					r.Seq, raText(r, d), firstAt.Seq, secs(firstAt.Sent-r.Done), knocks)
			}
		}
	}
	if !seen {
		return skip("no rejection carried Retry-After")
	}
	lockout := ""
	if lockouts > 0 {
		lockout = fmt.Sprintf("; retries before Retry-After extend the lockout (%d rejections; e.g. %s) — a fact about the limiter, not a header defect", lockouts, exLockout)
	}
	read := ""
	if lenient > 0 {
		read = fmt.Sprintf(" (%d values not valid as sent were read leniently)", lenient)
	}
	switch {
	case tested == 0 && silent == 0:
		return skip("no rejection was followed by a silent wait of its Retry-After or by an admission%s%s", read, lockout)
	case short > 0:
		return verdict{outcome: Fail, actual: fmt.Sprintf("too short for %d of %d silent waits%s: %s%s", short, silent, read, exShort, lockout),
			hint: "compute Retry-After from the limiter's state (time until the same request would pass) and round up", seqs: seqsShort,
			capWhy: "Retry-After too short", capLetter: "C"}
	case long > 0:
		return verdict{outcome: Fail, actual: fmt.Sprintf("more than twice the real wait for %d of %d rejections tested%s: %s%s", long, tested, read, exLong, lockout),
			hint: "compute Retry-After from the limiter's state rather than a fixed or worst-case value", seqs: seqsLong,
			capWhy: "Retry-After far too long"}
	case silent == 0:
		// Only "not too long" was seen: a pass on that alone would say
		// nothing of the rule that matters, that obeying it works.
		return skip("no silent wait tested Retry-After (%d rejections showed it not too long)%s%s", tested, read, lockout)
	}
	return verdict{outcome: Pass, actual: fmt.Sprintf("accurate for all %d rejections tested (%d silent waits)%s; e.g. %s%s", tested, silent, read, exOK, lockout),
		seqs: seqs(v.rejectionsWithRA(), 3)}
}

// retryWait is the wait r's Retry-After asks for (from r's completion) and
// the instant it ends; ok is false for a date without a clock to read it
// against.
func (v *view) retryWait(r *res) (time.Duration, time.Time, bool) {
	done := v.abs(r.Done)
	if r.ra.Form == headers.RetryAfterDate {
		if r.ra.At.IsZero() {
			return 0, time.Time{}, false
		}
		return max(r.ra.At.Sub(done), 0), r.ra.At, true
	}
	return r.ra.Delay, done.Add(r.ra.Delay), true
}

// raText is a Retry-After as evidence: the value and the wait it means.
func raText(r *res, d time.Duration) string {
	if r.ra.Form == headers.RetryAfterDate || r.raLenient {
		return fmt.Sprintf("%q (%s)", r.Headers["retry-after"], secs(d))
	}
	return secs(d)
}

func (v *view) rejectionsWithRA() []*res {
	return v.filter(func(r *res) bool { return r.Rejected() && r.hasRA })
}

// abs is the wall-clock instant of an offset into the run.
func (v *view) abs(off time.Duration) time.Time { return v.obs.Start.Add(off) }

// checkRetryAfterOnlyOnRejections: Retry-After on a 2xx tells a client
// that honours it to wait although nothing was refused (RFC 9110 §10.2.3
// gives it to 503 and 3xx; RFC 6585 to 429). One library's README recipe
// sends it on every response.
func checkRetryAfterOnlyOnRejections(v *view) verdict {
	adm := v.admissions()
	if len(adm) == 0 {
		return skip("no request was admitted")
	}
	var with []*res
	for _, r := range adm {
		if _, ok := r.Headers["retry-after"]; ok {
			with = append(with, r)
		}
	}
	if len(with) > 0 {
		return verdict{outcome: Warn, actual: fmt.Sprintf("%d of %d successful responses carry Retry-After; e.g. seq %d: %q", len(with), len(adm), with[0].Seq, with[0].Headers["retry-after"]),
			hint: "send Retry-After on rejections only; say what is left with RateLimit / X-RateLimit-* instead", seqs: seqs(with, maxSeqs)}
	}
	return verdict{outcome: Pass, actual: fmt.Sprintf("none of %d successful responses carries Retry-After", len(adm))}
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
