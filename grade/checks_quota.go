package grade

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/headers"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

const noQuota = "no response carried X-RateLimit-* or RateLimit fields"

// checkQuotaPresent: clients can only pace themselves if successful
// responses say how much is left (the draft sends RateLimit on any
// response; the X-RateLimit-* convention on every one).
func checkQuotaPresent(v *view) verdict {
	adm := v.admissions()
	if len(adm) == 0 {
		return skip("no request was admitted")
	}
	var without []*res
	for _, r := range adm {
		if !r.hasQuota() {
			without = append(without, r)
		}
	}
	onRejections := 0
	for _, r := range v.rejections() {
		if r.hasQuota() {
			onRejections++
		}
	}
	const hint = `send X-RateLimit-Limit/-Remaining/-Reset or RateLimit-Policy: "default";q=L;w=W and RateLimit: "default";r=R;t=T on every response`
	switch {
	case len(without) == 0:
		return verdict{outcome: Pass, actual: fmt.Sprintf("all %d admitted responses carry quota fields (%s)", len(adm), v.styles()), seqs: seqs(adm, 3)}
	case len(without) == len(adm) && onRejections > 0:
		return verdict{outcome: Fail, actual: fmt.Sprintf("quota fields only on rejections (%d of them); none on %d admitted responses", onRejections, len(adm)),
			hint: hint, seqs: seqs(without, maxSeqs), capWhy: "quota headers only on rejections"}
	case len(without) == len(adm):
		return verdict{outcome: Fail, actual: fmt.Sprintf("no quota fields on any of %d responses", len(v.rs)), hint: hint, seqs: seqs(without, 3),
			capWhy: "no quota headers"}
	}
	return verdict{outcome: Warn, actual: fmt.Sprintf("%d of %d admitted responses lack quota fields", len(without), len(adm)), hint: hint, seqs: seqs(without, maxSeqs)}
}

// styles names the quota field styles seen.
func (v *view) styles() string {
	var x, ietf string
	for _, r := range v.rs {
		if r.x.Spelling != "" && x == "" {
			x = r.x.Spelling + "-*"
		}
		if r.ietf.Present && ietf == "" {
			ietf = "IETF " + r.ietf.Generation
		}
	}
	return strings.Trim(x+", "+ietf, ", ")
}

// checkQuotaConsistent: the fields parse; Remaining ≤ Limit (r ≤ q); every
// RateLimit item names a declared policy; when both styles are sent they
// agree; the advertised limit does not change from response to response
// (draft-10 §3: the policy should not change).
func checkQuotaConsistent(v *view) verdict {
	var problems []string
	var bad []int
	n, nBad := 0, 0
	limits := map[string]map[int64]bool{}
	var last *res
	var nonInteger []*res
	var exNonInteger, vendor string
	flag := func(r *res, format string, a ...any) {
		if len(problems) < 3 {
			problems = append(problems, fmt.Sprintf("seq %d: ", r.Seq)+fmt.Sprintf(format, a...))
		}
		if r != last {
			nBad++
			last = r
		}
		bad = addSeq(bad, r.Seq)
	}
	for _, r := range v.rs {
		if !r.hasQuota() {
			continue
		}
		n++
		if r.xErr != nil {
			flag(r, "%v", r.xErr)
		}
		if r.ietfErr != nil {
			flag(r, "%v", r.ietfErr)
		}
		for _, f := range r.ietf.Findings {
			if strings.Contains(f, "exceeds") || strings.Contains(f, "does not declare") || strings.Contains(f, "required") {
				flag(r, "%s", f)
			}
		}
		qs := r.quotas()
		for _, q := range qs {
			if q.hasLimit && q.hasRemaining && q.remaining > q.limit && q.src == srcX {
				flag(r, "%s %d exceeds %s %d", q.remainingName, q.remaining, q.limitName, q.limit)
			}
			if q.hasLimit {
				if limits[q.src] == nil {
					limits[q.src] = map[int64]bool{}
				}
				limits[q.src][q.limit] = true
			}
		}
		if len(qs) == 2 {
			a, b := qs[0], qs[1]
			if a.hasLimit && b.hasLimit && a.limit != b.limit {
				flag(r, "%s %d but %s %d", a.limitName, a.limit, b.limitName, b.limit)
			}
			if a.hasRemaining && b.hasRemaining && a.remaining != b.remaining {
				flag(r, "%s %d but %s %d", a.remainingName, a.remaining, b.remainingName, b.remaining)
			}
		}
		for _, f := range []headers.IntField{r.x.Limit, r.x.Remaining, r.x.Used} {
			if f.NonInteger {
				nonInteger = append(nonInteger, r)
				if exNonInteger == "" {
					exNonInteger = fmt.Sprintf("seq %d: %s", r.Seq, strings.Join(r.x.Findings, "; "))
				}
				break
			}
		}
		if r.x.Duration.Present && r.x.Duration.Err == nil && vendor == "" {
			vendor = fmt.Sprintf("; vendor field %s-Duration %s read as the window", r.x.Spelling, r.x.Duration.Raw)
		}
	}
	if n == 0 {
		return skip(noQuota)
	}
	if len(bad) > 0 {
		return verdict{outcome: Fail, actual: fmt.Sprintf("%d of %d responses with quota fields are inconsistent; %s%s", nBad, n, strings.Join(problems, "; "), vendor), seqs: bad}
	}
	if len(nonInteger) > 0 {
		// Readable and consistent, but a client that parses an integer
		// (as the convention and every draft's q/r do) rejects it.
		return verdict{outcome: Warn, actual: fmt.Sprintf("%d of %d responses carry a non-integer count; e.g. %s%s", len(nonInteger), n, exNonInteger, vendor),
			hint: "send whole numbers for Limit, Remaining and Used", seqs: seqs(nonInteger, maxSeqs)}
	}
	for src, set := range limits {
		if len(set) > 1 {
			var vals []string
			for l := range set {
				vals = append(vals, fmt.Sprint(l))
			}
			sort.Strings(vals)
			return verdict{outcome: Warn, actual: fmt.Sprintf("the %s limit changed between responses: %s", src, strings.Join(vals, ", ")),
				hint: "advertise the policy, not a value that moves"}
		}
	}
	return verdict{outcome: Pass, actual: fmt.Sprintf("%d responses with quota fields, all consistent%s", n, vendor)}
}

// remainingOf returns what src said was remaining on r.
func remainingOf(r *res, src string) (int64, bool) {
	for _, q := range r.quotas() {
		if q.src == src && q.hasRemaining {
			return q.remaining, true
		}
	}
	return 0, false
}

func limitOf(r *res, src string) (int64, bool) {
	for _, q := range r.quotas() {
		if q.src == src && q.hasLimit {
			return q.limit, true
		}
	}
	return 0, false
}

// checkRemainingTruthful tests Remaining against what the server did next.
//
// In each burst released at one instant (the server decides its requests in
// some order, all at once): the admitted responses' Remaining values fall by
// one per admission (distinct, up to capacity returning during the burst),
// and when the burst also saw rejections the lowest of them is 0 — a
// response saying "1 left" followed in the same instant by a rejection
// claimed capacity that was not there.
//
// Sequentially: an admitted response that says Remaining ≥ 1, followed by
// the key's next request being rejected, each of the two alone in flight.
// Remaining only grows with time in every limiter family while nothing is
// admitted, so that is a lie whatever the algorithm.
func checkRemainingTruthful(v *view) verdict {
	var problems []string
	var bad []int
	tested := 0
	note := func(format string, a ...any) {
		if len(problems) < 2 {
			problems = append(problems, fmt.Sprintf(format, a...))
		}
	}
	for _, src := range []string{srcX, srcIETF} {
		for _, b := range v.bursts() {
			if v.straddlesWindow(b) {
				continue
			}
			var adm []*res
			var vals []int64
			var firstRej *res
			for _, r := range b {
				if r.Rejected() && firstRej == nil {
					firstRej = r
				}
				if rem, ok := remainingOf(r, src); ok && r.Admitted() {
					adm, vals = append(adm, r), append(vals, rem)
				}
			}
			if len(adm) == 0 || (len(adm) < 2 && firstRej == nil) {
				continue
			}
			tested++
			tol := int64(v.slack(span(b)))
			lowest := 0
			for i := range vals {
				if vals[i] < vals[lowest] {
					lowest = i
				}
			}
			if firstRej != nil && vals[lowest] > tol {
				note("%s: in burst %q every admitted response said at least %d left, yet seq %d in the same instant was rejected", src, b[0].Phase, vals[lowest], firstRej.Seq)
				bad = addSeq(bad, adm[lowest].Seq, firstRej.Seq)
			}
			if v.inf.Family == limiter.Concurrency {
				continue // slots come back during the burst: no count-down
			}
			if d := distinct(vals); len(adm)-d > int(tol) {
				note("%s: in burst %q, %d admitted responses shared %d Remaining values (it should fall by one per admission)", src, b[0].Phase, len(adm), d)
				bad = addSeq(bad, duplicates(adm, vals)...)
			}
		}
		// Sequential pairs: A alone in flight, then the key's next request
		// B alone in flight and complete before the key's next one was
		// sent (silentNext). Burst members are never B: their send stamps
		// are microseconds apart and do not give the order of decisions;
		// nor is a volley member answered after the next was sent: on a
		// loaded machine the next may reach the server first and take the
		// last of the capacity (CI saw "said 1 left" and then a rejection
		// 3 ms into a deciding volley).
		for i, a := range v.rs {
			rem, ok := remainingOf(a, src)
			if !ok || !a.Admitted() || a.Sent < v.doneBefore[i] {
				continue
			}
			next := v.silentNext(i)
			if next == nil {
				continue
			}
			tested++
			if rem >= 1 && next.Rejected() {
				note("%s: seq %d said %d left; the next request, seq %d (sent %s later, nothing else in flight), was rejected", src, a.Seq, rem, next.Seq, secs(next.Sent-a.Done))
				bad = addSeq(bad, a.Seq, next.Seq)
			}
		}
	}
	if tested == 0 {
		if !v.anyRemaining() {
			return skip("no response carried a Remaining value")
		}
		return skip("no burst or request pair exercised Remaining")
	}
	if len(bad) > 0 {
		return verdict{outcome: Fail, actual: strings.Join(problems, "; "),
			hint: "report the count the decision used, after this request: 0 on the last admitted one", seqs: bad}
	}
	return verdict{outcome: Pass, actual: fmt.Sprintf("Remaining matched the decisions in %d bursts and request pairs", tested)}
}

func distinct(vals []int64) int {
	m := map[int64]bool{}
	for _, x := range vals {
		m[x] = true
	}
	return len(m)
}

// duplicates returns the seqs of responses that repeat a value.
func duplicates(rs []*res, vals []int64) []int {
	seen := map[int64]bool{}
	var out []int
	for i, x := range vals {
		if seen[x] && len(out) < 6 {
			out = append(out, rs[i].Seq)
		}
		seen[x] = true
	}
	return out
}

func (v *view) anyRemaining() bool {
	for _, r := range v.rs {
		for _, q := range r.quotas() {
			if q.hasRemaining {
				return true
			}
		}
	}
	return false
}

// nextAlone returns the request of the same key sent next after v.rs[i],
// and whether it went out after every earlier request of the key had
// completed (so nothing else was in flight to take capacity).
func (v *view) nextAlone(i int) (*res, bool) {
	a := v.rs[i]
	for j := i + 1; j < len(v.rs); j++ {
		if n := v.rs[j]; n.Key == a.Key {
			return n, n.Sent >= v.doneBefore[j]
		}
	}
	return nil, false
}

// silentNext returns the key's next request after v.rs[i] when it is a
// test of what v.rs[i] said about waiting: sent after every earlier request
// of the key completed (nothing in flight, nothing sent in between),
// complete before the key's next one was sent (a volley's later requests
// may reach the server first on a loaded machine and take the capacity),
// and not one of a burst, whose members take capacity from each other.
func (v *view) silentNext(i int) *res {
	n, clear := v.nextAlone(i)
	if n == nil || !clear || isBurst(n.Phase) || !v.quietBetween(v.rs[i], n) {
		return nil
	}
	for j := i + 1; j < len(v.rs); j++ {
		if v.rs[j] != n {
			continue
		}
		for k := j + 1; k < len(v.rs); k++ {
			if m := v.rs[k]; m.Key == n.Key {
				if m.Sent < n.Done {
					return nil
				}
				break
			}
		}
		break
	}
	return n
}

// quietBetween reports whether nothing the view leaves out that may have
// drawn on a's quota was in flight between a's send and n's: a failed
// request of the probe's own (the server may have decided it), or another
// identity's while the scope is untested (a global limit counts it). A
// loaded CI run graded a stated reset early when trials of other
// identities, left out of the view, had emptied a global bucket between.
func (v *view) quietBetween(a, n *res) bool {
	for _, m := range v.leftOut() {
		if m.Sent < n.Sent && m.Done > a.Sent {
			return false
		}
	}
	return true
}

// advertisedLimit is the value src states most often on admitted responses
// (and on any response when none was admitted with it).
func (v *view) advertisedLimit(src string) (int64, bool) {
	count := map[int64]int{}
	for _, pass := range []bool{true, false} {
		for _, r := range v.rs {
			if pass && !r.Admitted() {
				continue
			}
			if l, ok := limitOf(r, src); ok {
				count[l]++
			}
		}
		if len(count) > 0 {
			break
		}
	}
	best, n := int64(0), 0
	for l, c := range count {
		if c > n || c == n && l < best {
			best, n = l, c
		}
	}
	return best, n > 0
}

// maxBurstAdmitted is the most admissions seen in one burst, with the
// allowance for capacity returning during it.
func (v *view) maxBurstAdmitted() (int, int, []*res) {
	most, slack := 0, 0
	var which []*res
	for _, b := range v.bursts() {
		if v.straddlesWindow(b) {
			continue
		}
		var adm []*res
		for _, r := range b {
			if r.Admitted() {
				adm = append(adm, r)
			}
		}
		if len(adm) > most {
			most, slack, which = len(adm), v.burstSlack(b), adm
		}
	}
	return most, slack, which
}

// checkLimitAgrees compares the advertised limit (X-RateLimit-Limit, the
// policy's q) with the capacity the behaviour shows: the inferred bucket
// size, window limit or cap, and the most admitted in one burst.
func checkLimitAgrees(v *view) verdict {
	capN, capErr, what := v.capacity()
	most, slack, which := v.maxBurstAdmitted()
	var problems, fine []string
	var bad []int
	checked := 0
	for _, src := range []string{srcX, srcIETF} {
		l, ok := v.advertisedLimit(src)
		if !ok {
			continue
		}
		name := v.limitName(src)
		if v.inf.Family == limiter.None {
			continue
		}
		if capN > 0 {
			checked++
			tol := math.Max(1, 0.1*float64(capN)) + float64(capErr)
			switch {
			case math.Abs(float64(l)-float64(capN)) <= tol:
				fine = append(fine, fmt.Sprintf("%s %d, %s %d", name, l, what, capN))
			default:
				// The inference's number is one fit; does the advertised
				// one explain the decisions as well?
				cfg, ok := v.inferredConfig()
				if !ok { // a concurrency cap: compared by number
					problems = append(problems, fmt.Sprintf("%s %d, but the limiter behaves as %s %d", name, l, what, capN))
					break
				}
				base, alt := v.replayMismatches(cfg), v.advertisedReplay(cfg, int(l))
				if base >= 0 && alt >= 0 && alt <= base+max(1, len(v.rs)/200) {
					fine = append(fine, fmt.Sprintf("%s %d explains the decisions as well as the inferred %s %d (%d vs %d of %d wrong)", name, l, what, capN, alt, base, len(v.rs)))
					break
				}
				problems = append(problems, fmt.Sprintf("%s %d, but the limiter behaves as %s %d (with %d it gets %d of %d decisions wrong, with %d %d)",
					name, l, what, capN, l, alt, len(v.rs), capN, base))
			}
		}
		// More admitted at one instant than advertised disagrees whatever
		// the inference; fewer only agrees when the inference measured the
		// capacity too (a burst may have been cut short by anything).
		if most > int(l)+slack {
			checked++
			problems = append(problems, fmt.Sprintf("%d admitted in one burst against %s %d", most, name, l))
			bad = addSeq(bad, seqs(which, maxSeqs)...)
		}
	}
	if checked == 0 {
		if _, ok := v.advertisedLimit(srcX); !ok {
			if _, ok := v.advertisedLimit(srcIETF); !ok {
				return skip("no limit advertised")
			}
		}
		return skip("the inference is not confident enough to compare the advertised limit with (%s, confidence %.2f < %.2f)", v.inf.Family, v.inf.Confidence, minConfidence)
	}
	if len(problems) > 0 {
		return verdict{outcome: Fail, actual: replicaNote(v) + strings.Join(problems, "; "), hint: replicaHint(v, "advertise the limit the limiter enforces"), seqs: bad}
	}
	return verdict{outcome: Pass, actual: strings.Join(fine, "; ")}
}

// checkResetSane: a reset in the past tells a client to go ahead now; one
// far beyond the window or refill time holds it back for nothing; epoch
// milliseconds are a unit clients do not expect (headers.md: >1e12 is ms).
func checkResetSane(v *view) verdict {
	period := v.periodS()
	var past, far, ms, date []*res
	var exPast, exFar string
	n := 0
	for _, r := range v.rs {
		x := r.x
		if x.Reset.Present && x.Reset.Err == nil {
			n++
			switch x.ResetUnit {
			case headers.ResetEpochMillis:
				ms = append(ms, r)
			case headers.ResetDate:
				date = append(date, r)
			}
			in, known := x.ResetIn, x.ResetInKnown
			anchorTol := time.Duration(0)
			if !known && !x.ResetAt.IsZero() {
				// No Date header: measure from our own clock, allowing skew.
				in, known = x.ResetAt.Sub(v.obs.Start.Add(r.FirstByte)), true
				anchorTol = 2 * time.Second
			}
			if known && in < -anchorTol {
				past = append(past, r)
				if exPast == "" {
					exPast = fmt.Sprintf("seq %d: %s-Reset %s is %s in the past", r.Seq, x.Spelling, x.Reset.Raw, secs(-in))
				}
			}
			w := period
			if q, ok := r.policyWindow(); ok {
				w = math.Max(w, float64(q))
			}
			if known && w > 0 && in.Seconds() > 2*w+2 {
				far = append(far, r)
				if exFar == "" {
					exFar = fmt.Sprintf("seq %d: %s-Reset is %s away; the window/refill time is %.3g s", r.Seq, x.Spelling, secs(in), w)
				}
			}
		}
		for _, cur := range r.ietf.Current {
			if !cur.HasReset {
				continue
			}
			n++
			w := period
			if q, ok := r.policyWindow(); ok {
				w = math.Max(w, float64(q))
			}
			if w > 0 && float64(cur.ResetSeconds) > 2*w+1 {
				far = append(far, r)
				if exFar == "" {
					exFar = fmt.Sprintf("seq %d: %s %d; the window/refill time is %.3g s", r.Seq, ietfName(r.ietf.Generation, "reset"), cur.ResetSeconds, w)
				}
			}
		}
	}
	if n == 0 {
		return skip("no response carried a reset (X-RateLimit-Reset, RateLimit t)")
	}
	switch {
	case len(past) > 0 || len(far) > 0:
		var parts []string
		if exPast != "" {
			parts = append(parts, fmt.Sprintf("%d resets in the past (%s)", len(past), exPast))
		}
		if exFar != "" {
			parts = append(parts, fmt.Sprintf("%d resets beyond twice the window (%s)", len(far), exFar))
		}
		return verdict{outcome: Fail, actual: strings.Join(parts, "; "), hint: "send the instant the quota is whole again (epoch seconds) or the seconds until then",
			seqs: seqs(append(past, far...), maxSeqs)}
	case len(ms) > 0:
		return verdict{outcome: Warn, actual: fmt.Sprintf("%d X-RateLimit-Reset values are epoch milliseconds (e.g. %s); clients expect epoch seconds or delta seconds", len(ms), ms[0].x.Reset.Raw),
			hint: "send epoch seconds (GitHub's convention)", seqs: seqs(ms, maxSeqs)}
	case len(date) > 0:
		return verdict{outcome: Warn, actual: fmt.Sprintf("%d X-RateLimit-Reset values are dates (e.g. %q); clients expect a number", len(date), date[0].x.Reset.Raw),
			hint: "send epoch seconds (GitHub's convention)", seqs: seqs(date, maxSeqs)}
	}
	return verdict{outcome: Pass, actual: fmt.Sprintf("%d resets, all ahead and within twice the window/refill time (%s)", n, v.resetUnits())}
}

func (r *res) policyWindow() (int64, bool) {
	for _, q := range r.quotas() {
		if q.src == srcIETF && q.windowS > 0 {
			return q.windowS, true
		}
	}
	return 0, false
}

func (v *view) resetUnits() string {
	units := map[string]bool{}
	for _, r := range v.rs {
		if r.x.ResetUnit != "" {
			units["X-RateLimit-Reset "+string(r.x.ResetUnit)] = true
		}
		if len(r.ietf.Current) > 0 && r.ietf.Current[0].HasReset {
			units[ietfName(r.ietf.Generation, "reset")+" delta-s"] = true
		}
	}
	var out []string
	for u := range units {
		out = append(out, u)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// checkBurstOverAdmission: a burst released at one instant must not get
// more admissions than the advertised limit. More means the decision reads
// a count and writes it back non-atomically (the check-then-act race of
// seeds 003 and 002: Redis without Lua, replicas each allowing the full
// limit), or that the limit is understated.
func checkBurstOverAdmission(v *view) verdict {
	bs := v.bursts()
	if len(bs) == 0 {
		return skip("%s", v.noBurstReason())
	}
	var lim int64
	src := ""
	for _, s := range []string{srcX, srcIETF} {
		if l, ok := v.advertisedLimit(s); ok {
			lim, src = l, s
			break
		}
	}
	if src == "" {
		return skip("no limit advertised to hold the bursts to")
	}
	var worst []*res
	var worstSlack, n, most int
	for _, b := range bs {
		if v.straddlesWindow(b) {
			continue
		}
		var adm []*res
		for _, r := range b {
			if r.Admitted() {
				adm = append(adm, r)
			}
		}
		most = max(most, len(b))
		if s := v.burstSlack(b); n == 0 || len(adm)-s > len(worst)-worstSlack {
			worst, worstSlack = adm, s
		}
		n++
	}
	if n == 0 {
		return skip("every burst straddled a window boundary")
	}
	if most < 2 {
		// A limit per connection: each request of a burst went over a
		// connection of its own, a client of its own.
		return skip("no burst sent one client more than one request (the limit counts per connection, and each burst request had its own)")
	}
	if len(worst) > int(lim)+worstSlack {
		return verdict{outcome: Fail, actual: replicaNote(v) + fmt.Sprintf("%d admitted in a burst released at one instant against an advertised limit of %d (+%d for refill during it)", len(worst), lim, worstSlack),
			hint: replicaHint(v, "make the check and the decrement one atomic step (a Lua script in Redis, a lock, INCR-then-compare)"), seqs: seqs(worst, maxSeqs)}
	}
	return verdict{outcome: Pass, actual: fmt.Sprintf("at most %d admitted per burst (%s) against a limit of %d", len(worst), plural(n, "burst"), lim)}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// limitName names the field src's advertised limit came from on the
// responses that carried it ("X-Rate-Limit-Limit", "RateLimit-Policy q",
// "RateLimit-Limit", ...).
func (v *view) limitName(src string) string {
	for _, r := range v.rs {
		for _, q := range r.quotas() {
			if q.src == src && q.hasLimit {
				return q.limitName
			}
		}
	}
	return src + "-Limit"
}

// advertisedReplay is how many decisions the inferred model gets wrong with
// the advertised limit l in place of the inferred capacity. For a fixed
// window it also tries the window the policy advertises, both alignments,
// and a window restarted by every rejection (penalty=restart, which the
// inference does not fit yet): a limiter that counts rejected attempts makes the
// inference stretch its window and limit to explain the lockout, and the
// advertised policy should be judged as the limiter it describes. The best
// of them counts; -1 when none can be replayed.
func (v *view) advertisedReplay(cfg limiter.Config, l int) int {
	best := v.replayMismatches(withCapacity(cfg, l))
	if cfg.Algo != limiter.FixedWindow {
		return best
	}
	windows := []time.Duration{cfg.Window}
	if w := v.advertisedWindow(); w > 0 && w != cfg.Window {
		windows = append(windows, w)
	}
	// The policy says nothing of alignment either: try both.
	for _, w := range windows {
		for _, penalty := range []string{limiter.PenaltyNone, limiter.PenaltyRestart} {
			for _, align := range []string{limiter.AlignWall, limiter.AlignFirst} {
				c := withCapacity(cfg, l)
				c.Window, c.Penalty, c.Align = w, penalty, align
				if m := v.replayMismatches(c); m >= 0 && (best < 0 || m < best) {
					best = m
				}
			}
		}
	}
	return best
}

// advertisedWindow is the policy window (RateLimit-Policy w, or the vendor
// field -Duration) the responses state most often; 0 when none does.
func (v *view) advertisedWindow() time.Duration {
	count := map[time.Duration]int{}
	for _, r := range v.rs {
		if w, ok := r.policyWindow(); ok {
			count[time.Duration(w)*time.Second]++
		} else if d := r.x.Duration; d.Present && d.Err == nil && d.Seconds > 0 {
			count[time.Duration(d.Seconds*float64(time.Second))]++
		}
	}
	best, n := time.Duration(0), 0
	for w, c := range count {
		if c > n || c == n && w < best {
			best, n = w, c
		}
	}
	return best
}
