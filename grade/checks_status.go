package grade

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ratecheck/ratecheck/headers"
)

const noRejection = "no request was rejected"

// checkStatus: RFC 6585 §4 defines 429 for rate limiting; 503 (nginx's
// limit_req default) and 403 (HAProxy deny, GitHub) tell a client something
// else.
func checkStatus(v *view) verdict {
	rej := v.rejections()
	if len(rej) == 0 {
		return skip(noRejection)
	}
	byStatus := map[int]int{}
	var bad []*res
	for _, r := range rej {
		byStatus[r.Status]++
		if r.Status != 429 {
			bad = append(bad, r)
		}
	}
	actual := fmt.Sprintf("%d rejections: %s", len(rej), countsText(byStatus))
	if len(bad) == 0 {
		return verdict{outcome: Pass, actual: actual, seqs: seqs(rej, 3)}
	}
	var hints []string
	if byStatus[503] > 0 {
		hints = append(hints, "503 says the server is down, not that this client is over its quota; nginx: limit_req_status 429; (and limit_conn_status 429;)")
	}
	if byStatus[403] > 0 {
		hints = append(hints, "403 says the client may never have this; HAProxy: http-request deny deny_status 429")
	}
	return verdict{outcome: Fail, actual: actual, hint: strings.Join(hints, "; "), seqs: seqs(bad, maxSeqs),
		capWhy: fmt.Sprintf("rejects with %s instead of 429", statusList(byStatus))}
}

func countsText(m map[int]int) string {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d × %d", m[k], k))
	}
	return strings.Join(parts, ", ")
}

func statusList(m map[int]int) string {
	var parts []string
	for _, s := range []int{503, 403} {
		if m[s] > 0 {
			parts = append(parts, strconv.Itoa(s))
		}
	}
	return strings.Join(parts, "/")
}

// checkProblemJSON: RFC 9457 problem details are how an HTTP API explains
// an error, and the RateLimit draft registers quota-exceeded for a 429. A
// recommendation: a violation warns.
func checkProblemJSON(v *view) verdict {
	rej := v.rejections()
	if len(rej) == 0 {
		return skip(noRejection)
	}
	var bad []*res
	first := ""
	registered := 0
	for _, r := range rej {
		ct := r.Headers["content-type"]
		body := []byte(r.Body)
		p, err := headers.ParseProblem(ct, body)
		if err != nil && len(body) >= 1024 && strings.Contains(err.Error(), "not JSON") {
			// The results keep 1 KiB of the body: judge the media type alone.
			err = nil
			if e := mediaTypeOnly(ct); e != "" {
				err = fmt.Errorf("%s", e)
			}
		} else if err == nil && p.Status != nil && *p.Status != r.Status {
			err = fmt.Errorf("problem status %d on a %d response (RFC 9457 §3.1.2)", *p.Status, r.Status)
		}
		if err != nil {
			bad = append(bad, r)
			if first == "" {
				first = strings.ReplaceAll(err.Error(), "\n", "; ")
			}
			continue
		}
		if p.Type == headers.ProblemQuotaExceeded || p.Type == headers.ProblemTemporaryReducedCapacity || p.Type == headers.ProblemAbnormalUsageDetected {
			registered++
		}
	}
	if len(bad) == 0 {
		a := fmt.Sprintf("%d rejections carry problem+json", len(rej))
		if registered > 0 {
			a += fmt.Sprintf(" (%d with a registered RateLimit problem type)", registered)
		}
		return verdict{outcome: Pass, actual: a, seqs: seqs(rej, 3)}
	}
	return verdict{outcome: Warn, actual: fmt.Sprintf("%d of %d rejections are not problem details; e.g. %s", len(bad), len(rej), first),
		hint: `send Content-Type: application/problem+json with {"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Too Many Requests","status":429}`,
		seqs: seqs(bad, maxSeqs)}
}

func mediaTypeOnly(ct string) string {
	mt, _, _ := strings.Cut(ct, ";")
	if strings.EqualFold(strings.TrimSpace(mt), headers.MediaTypeProblemJSON) {
		return ""
	}
	return fmt.Sprintf("Content-Type %q is not %s", ct, headers.MediaTypeProblemJSON)
}

// checkCache429: RFC 6585 §4 says a 429 MUST NOT be stored by a cache. A
// cache may store a response that carries explicit freshness or public /
// private (RFC 9111 §3); a 429 is not heuristically cacheable, so without
// those it is safe, and no-store makes it explicit.
func checkCache429(v *view) verdict {
	rej := v.rejections()
	if len(rej) == 0 {
		return skip(noRejection)
	}
	var bad429, bad503 []*res
	first := ""
	noStore, silent := 0, 0
	for _, r := range rej {
		cc := r.Headers["cache-control"]
		storable, why := storable(cc)
		switch {
		case storable && r.Status == 429:
			bad429 = append(bad429, r)
		case storable:
			bad503 = append(bad503, r)
		case cc == "":
			silent++
		default:
			noStore++
		}
		if storable && first == "" {
			first = fmt.Sprintf("%d with Cache-Control: %s (%s)", r.Status, cc, why)
		}
	}
	const hint = "send Cache-Control: no-store on rejections"
	switch {
	case len(bad429) > 0:
		return verdict{outcome: Fail, actual: fmt.Sprintf("%d rejections a cache may store; e.g. %s", len(bad429)+len(bad503), first), hint: hint, seqs: seqs(append(bad429, bad503...), maxSeqs)}
	case len(bad503) > 0:
		return verdict{outcome: Warn, actual: fmt.Sprintf("%d rejections a cache may store; e.g. %s", len(bad503), first), hint: hint, seqs: seqs(bad503, maxSeqs)}
	}
	a := fmt.Sprintf("%d rejections: none storable", len(rej))
	if silent > 0 {
		a += fmt.Sprintf(" (%d without Cache-Control, which is safe because a 429 is not heuristically cacheable; no-store says so explicitly)", silent)
	}
	return verdict{outcome: Pass, actual: a, seqs: seqs(rej, 3)}
}

// storable reports whether Cache-Control lets a cache store the response.
func storable(cc string) (bool, string) {
	if cc == "" {
		return false, ""
	}
	var reason string
	for d := range strings.SplitSeq(cc, ",") {
		name, val, _ := strings.Cut(strings.TrimSpace(d), "=")
		name = strings.ToLower(strings.TrimSpace(name))
		val = strings.Trim(strings.TrimSpace(val), `"`)
		switch name {
		case "no-store":
			return false, ""
		case "max-age", "s-maxage":
			if n, err := strconv.Atoi(val); err == nil && n > 0 && reason == "" {
				reason = "explicit freshness"
			}
		case "public", "private":
			if reason == "" {
				reason = name + " allows storing"
			}
		}
	}
	return reason != "", reason
}
