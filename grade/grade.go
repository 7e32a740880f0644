// Package grade grades a rate limiter's response contract from what a probe
// observed: the status it rejects with, Retry-After (present, valid,
// accurate against what happened next), the quota headers (present,
// consistent, truthful about Remaining, agreeing with the limit the
// behaviour shows, a sane Reset), over-admission in a concurrent burst,
// problem+json and the cacheability of a 429. Each check has a stable ID,
// cites the rule it applies, and lists the request sequence numbers that
// show its outcome. Grade turns the checks into a score and a letter under
// the versioned rubric of docs/grading.md.
//
// Everything is judged from the observation alone (plus the inference, for
// the limit and the refill rate): no request is sent here.
package grade

import (
	"fmt"
	"math"

	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/probe/bypass"
)

// RubricVersion names the rubric (docs/grading.md) Grade applies: the
// weights, the caps and the letter bands.
const RubricVersion = "5"

// Outcomes of a check.
const (
	Pass = "pass"
	Warn = "warn"
	Fail = "fail"
	Skip = "skip" // the run did not exercise it; never counts as a pass
)

// Severities: how much a check matters.
const (
	SeverityError = "error"
	SeverityWarn  = "warn" // a recommendation: a violation is a warn, never a fail
	SeverityInfo  = "info"
)

// Check is one graded rule.
type Check struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Severity string `json:"severity"`
	Source   string `json:"source"` // the rule's origin, e.g. "RFC 6585 §4"
	Weight   int    `json:"weight"` // points of 100 in the rubric
	Outcome  string `json:"outcome"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"` // what was seen; for a skip, why
	Hint     string `json:"hint,omitempty"`
	Seqs     []int  `json:"seqs,omitempty"` // requests that show it (results file seq)
}

// Report is the grade of one probe.
type Report struct {
	// Letter is A+, A, B, C, D or F; "N/A" when the run saw no rejection,
	// so there was no response contract to grade.
	Letter string `json:"letter"`
	// Score is out of 100: 100 less the weight of every failed check and
	// half the weight of every warned one. A skipped check deducts nothing
	// and passes nothing: it bars A+ (severity error) and its absence is
	// graded by the check it depends on (retry-after.present, ...).
	Score int `json:"score"`
	// Caps name each rule that held the letter down: "C: no Retry-After
	// (retry-after.present)".
	Caps          []string `json:"caps"`
	Checks        []Check  `json:"checks"`
	RubricVersion string   `json:"rubric_version"`
	Note          string   `json:"note,omitempty"`
}

// letters from best to worst.
var letters = [...]string{"A+", "A", "B", "C", "D", "F"}

// Letters are the grades from best to worst (a new slice: the rubric's own
// cannot be changed by a caller).
func Letters() []string { return append([]string(nil), letters[:]...) }

// NotGraded is the letter of a run with nothing to grade.
const NotGraded = "N/A"

// rule is one check of the rubric.
type rule struct {
	id, title, severity, source, expected string
	weight                                int
	// capLetter and capWhy apply when the check fails.
	capLetter, capWhy string
	run               func(*view) verdict
}

// verdict is what a check function found.
type verdict struct {
	outcome string
	actual  string
	hint    string
	seqs    []int
	// capWhy and capLetter override the rule's cap reason and letter for
	// this run ("" keeps them).
	capWhy, capLetter string
}

func skip(why string, a ...any) verdict {
	return verdict{outcome: Skip, actual: fmt.Sprintf(why, a...)}
}

// rubric is the check list of RubricVersion, in report order. Weights sum
// to 100.
var rubric = []rule{
	{"status.429", "rejects with 429 Too Many Requests", SeverityError, "RFC 6585 §4",
		"every rejection is 429", 10, "C", "rejects with 503/403 instead of 429", checkStatus},
	{"retry-after.present", "Retry-After on rejections", SeverityError, "RFC 6585 §4; RFC 9110 §10.2.3",
		"Retry-After on every 429/503", 10, "C", "no Retry-After", checkRetryAfterPresent},
	{"retry-after.valid", "Retry-After is delay-seconds or an IMF-fixdate", SeverityError, "RFC 9110 §10.2.3, §5.6.7",
		"1*DIGIT or an IMF-fixdate HTTP-date", 7, "C", "invalid Retry-After", checkRetryAfterValid},
	// A too-short Retry-After caps at C (the verdict says so): it sends
	// obeying clients back early, the retry storm the header exists to
	// prevent, so it is no better than none. A far too long one caps at B.
	{"retry-after.accurate", "Retry-After tells the real wait", SeverityError, "RFC 9110 §10.2.3",
		"a request sent in silence when Retry-After says is admitted; the real wait is not under half of Retry-After", 9, "B", "Retry-After inaccurate", checkRetryAfterAccurate},
	{"retry-after.only-on-rejections", "Retry-After only on rejections", SeverityWarn, "RFC 6585 §4; RFC 9110 §10.2.3",
		"no Retry-After on a 2xx", 2, "", "", checkRetryAfterOnlyOnRejections},
	{"quota.present-on-success", "quota headers on successful responses", SeverityError, "draft-ietf-httpapi-ratelimit-headers-10 §4; X-RateLimit-* convention",
		"X-RateLimit-* or RateLimit/RateLimit-Policy on every 2xx", 7, "B", "no quota headers on successes", checkQuotaPresent},
	{"quota.consistent", "quota headers agree with themselves", SeverityError, "draft-ietf-httpapi-ratelimit-headers-10 §3–4",
		"well-formed; Remaining ≤ Limit, r ≤ q; both styles say the same; the policy does not change; integers are integers", 6, "B", "inconsistent quota headers", checkQuotaConsistent},
	{"remaining.truthful", "Remaining tells the truth", SeverityError, "draft-ietf-httpapi-ratelimit-headers-10 §4.1",
		"falls by one per admission in a burst, is 0 when the next request is rejected, never claims capacity that is not there", 9, "C", "Remaining lies", checkRemainingTruthful},
	{"limit.agrees", "advertised limit matches the behaviour", SeverityError, "draft-ietf-httpapi-ratelimit-headers-10 §3.1",
		"Limit / q within ±max(1, 10%) of the capacity a confident inference measured; no burst admits more", 6, "B", "advertised limit disagrees with the behaviour", checkLimitAgrees},
	{"reset.sane", "Reset is in the future and plausible", SeverityError, "X-RateLimit-* convention (headers.md); draft-ietf-httpapi-ratelimit-headers-10 §4.2",
		"not in the past, not beyond 2× the window/refill time, epoch seconds or delta seconds", 4, "B", "Reset in the past or implausible", checkResetSane},
	{"reset.accurate", "Reset follows the state", SeverityError, "X-RateLimit-* convention (headers.md); draft-ietf-httpapi-ratelimit-headers-10 §4.2",
		"a request sent in silence at the stated reset is admitted (with the quota whole, for a full reset); no reset ahead on a whole quota", 5, "B", "Reset early or frozen", checkResetAccurate},
	{"burst.over-admission", "a concurrent burst admits no more than the limit", SeverityError, "seeds 003 (check-then-act races)",
		"admitted in one burst ≤ advertised limit (+ refill during the burst)", 5, "C", "over-admits a concurrent burst", checkBurstOverAdmission},
	{"problem.json", "rejection body is problem+json", SeverityWarn, "RFC 9457 §3; draft-ietf-httpapi-ratelimit-headers-10 §5",
		"Content-Type application/problem+json, a JSON object whose status matches", 3, "", "", checkProblemJSON},
	{"cache.429", "a 429 cannot be stored by a cache", SeverityError, "RFC 6585 §4; RFC 9111 §3",
		"Cache-Control: no-store (or no explicit freshness) on 429", 3, "B", "429 may be cached", checkCache429},
	{"scope.spoofable", "the limit cannot be bypassed with a forged proxy header", SeverityError, "RFC 7239 §8; OWASP API4:2023 (unrestricted resource consumption)",
		"fresh X-Forwarded-For, X-Real-IP and Forwarded values from an exhausted address are rejected", 4, "D", "anyone can bypass this limit by sending X-Forwarded-For", checkScopeSpoofable},
	{"bypass.address", "no other client-address header gets around the limit", SeverityError, "OWASP API4:2023; RFC 7239 §8",
		"fresh X-Client-IP, True-Client-IP, CF-Connecting-IP (and five more) values, and X-Forwarded-For lists or doubled lines, from an exhausted key are rejected like it", 2, "D", "anyone can get around this limit with a client-address header", checkBypass(bypass.Address)},
	{"bypass.path", "another spelling of the path does not get around the limit", SeverityError, "OWASP API4:2023; RFC 3986 §6",
		"a trailing slash, another letter case, a doubled slash, an encoded letter or space, a junk or reordered query is rejected like the exhausted key, or not served", 2, "D", "anyone can get around this limit by spelling the path another way", checkBypass(bypass.Path)},
	{"bypass.method", "another method does not get around the limit", SeverityError, "OWASP API4:2023; RFC 9110 §9.3.2",
		"HEAD for GET (and the methods --bypass-methods allows) is rejected like the exhausted key, or not served", 2, "D", "anyone can get around this limit with another method", checkBypass(bypass.Method)},
	{"bypass.protocol", "a new connection, or the other HTTP version, does not get around the limit", SeverityError, "OWASP API4:2023",
		"the same request on a new connection is rejected like the exhausted key", 2, "D", "anyone can get around this limit by reconnecting", checkBypass(bypass.Protocol)},
	{"bypass.identity", "another User-Agent or no cookies does not get around the limit", SeverityError, "OWASP API4:2023",
		"a fresh User-Agent (and the request without its cookies, when it has any) is rejected like the exhausted key", 2, "D", "anyone can get around this limit by changing its User-Agent", checkBypass(bypass.Identity)},
}

// Grade runs every check of the rubric on the observation and grades it.
func Grade(obs *probe.Observation, inf probe.Inference) Report {
	v := newView(obs, inf)
	rep := Report{RubricVersion: RubricVersion, Caps: []string{}}
	lost := 0.0
	capIdx := 0 // index into letters of the best letter the caps allow
	cleanTop := true
	for _, ru := range rubric {
		vd := ru.run(v)
		c := Check{ID: ru.id, Title: ru.title, Severity: ru.severity, Source: ru.source, Weight: ru.weight,
			Outcome: vd.outcome, Expected: ru.expected, Actual: vd.actual, Hint: vd.hint, Seqs: vd.seqs}
		if ru.severity == SeverityWarn && c.Outcome == Fail {
			c.Outcome = Warn // a recommendation never fails
		}
		switch c.Outcome {
		case Warn:
			lost += float64(ru.weight) / 2
			cleanTop = false
		case Fail:
			lost += float64(ru.weight)
			cleanTop = false
			if ru.capLetter != "" {
				why, letter := ru.capWhy, ru.capLetter
				if vd.capWhy != "" {
					why = vd.capWhy
				}
				if vd.capLetter != "" {
					letter = vd.capLetter
				}
				rep.Caps = append(rep.Caps, fmt.Sprintf("%s: %s (%s)", letter, why, ru.id))
				capIdx = max(capIdx, letterIndex(letter))
			}
		case Skip:
			if ru.severity == SeverityError {
				cleanTop = false // A+ needs every important check exercised
			}
		}
		rep.Checks = append(rep.Checks, c)
	}
	rep.Score = int(math.Round(100 - lost))
	if len(v.rejections()) == 0 {
		rep.Letter, rep.Score, rep.Caps = NotGraded, 0, []string{}
		rep.Note = "no request was rejected: the response contract was not exercised"
		return rep
	}
	rep.Letter = letters[max(letterIndex(scoreLetter(rep.Score, cleanTop)), capIdx)]
	return rep
}

// scoreLetter is the letter band of a score (docs/grading.md).
func scoreLetter(score int, clean bool) string {
	switch {
	case score >= 95 && clean:
		return "A+"
	case score >= 90:
		return "A"
	case score >= 80:
		return "B"
	case score >= 70:
		return "C"
	case score >= 60:
		return "D"
	}
	return "F"
}

func letterIndex(l string) int {
	for i, x := range letters {
		if x == l {
			return i
		}
	}
	return len(letters) - 1
}

// Check returns the check with id, and whether the report has it.
func (r Report) Check(id string) (Check, bool) {
	for _, c := range r.Checks {
		if c.ID == id {
			return c, true
		}
	}
	return Check{}, false
}

// CheckIDs lists the rubric's check IDs in report order.
func CheckIDs() []string {
	out := make([]string, len(rubric))
	for i, r := range rubric {
		out[i] = r.id
	}
	return out
}
