package grade

import (
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/headers"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// Quota field sources: the vendor convention and the IETF fields.
const (
	srcX    = "X-RateLimit"
	srcIETF = "RateLimit"
)

// res is one decided result with its header fields parsed once.
type res struct {
	*results.Result
	header http.Header
	date   time.Time // the Date header; zero when absent or unreadable

	x       headers.XRateLimit
	xErr    error
	ietf    headers.IETF
	ietfErr error

	// ra is Retry-After read as leniently as a forgiving client would
	// (hasRA); raLenient when the value is not valid as sent.
	ra        headers.RetryAfter
	hasRA     bool
	raLenient bool
}

// quota is what one source said about the quota on one response.
type quota struct {
	src          string
	limit        int64
	hasLimit     bool
	remaining    int64
	hasRemaining bool
	windowS      int64 // IETF w; 0 when not sent
	// The fields the values came from, as a reader would name them:
	// "X-Rate-Limit-Limit", "RateLimit-Policy q", "RateLimit-Limit", ...
	limitName, remainingName string
}

func (r *res) hasQuota() bool { return r.x.Spelling != "" || r.ietf.Present }

// quotas returns what each source that was sent said.
func (r *res) quotas() []quota {
	var out []quota
	if r.x.Spelling != "" {
		q := quota{src: srcX, limitName: r.x.Spelling + "-Limit", remainingName: r.x.Spelling + "-Remaining"}
		if f := r.x.Limit; f.Present && f.Err == nil {
			q.limit, q.hasLimit = f.Value, true
		}
		if f := r.x.Remaining; f.Present && f.Err == nil {
			q.remaining, q.hasRemaining = f.Value, true
		}
		out = append(out, q)
	}
	if r.ietf.Present {
		q := quota{src: srcIETF, limitName: ietfName(r.ietf.Generation, "limit"), remainingName: ietfName(r.ietf.Generation, "remaining")}
		var pol *headers.Policy
		if len(r.ietf.Current) > 0 {
			cur := r.ietf.Current[0]
			q.remaining, q.hasRemaining = cur.Remaining, cur.HasRemaining
			q.limit, q.hasLimit = cur.Limit, cur.HasLimit
			for i := range r.ietf.Policies {
				if r.ietf.Policies[i].Name == cur.Policy {
					pol = &r.ietf.Policies[i]
					break
				}
			}
		}
		if pol == nil && len(r.ietf.Policies) > 0 && (len(r.ietf.Current) == 0 || r.ietf.Current[0].Policy == "") {
			pol = &r.ietf.Policies[0]
		}
		if pol != nil && pol.HasQuota {
			q.limit, q.hasLimit, q.limitName = pol.Quota, true, "RateLimit-Policy"
			if r.ietf.Generation == headers.GenerationDraft08to10 {
				q.limitName = "RateLimit-Policy q"
			}
			if pol.HasWindow {
				q.windowS = pol.WindowSeconds
			}
		}
		out = append(out, q)
	}
	return out
}

// ietfName names where an IETF generation carries a value (what is one of
// "limit", "remaining", "reset"): draft-08..10 as the RateLimit parameter
// (r, t; the limit is the policy's q), draft-07 as the RateLimit dictionary
// key, earlier drafts as their own RateLimit-* field.
func ietfName(generation, what string) string {
	switch generation {
	case headers.GenerationDraft08to10:
		return map[string]string{"limit": "RateLimit-Policy q", "remaining": "RateLimit r", "reset": "RateLimit t"}[what]
	case headers.GenerationDraft07:
		return "RateLimit " + what
	}
	return "RateLimit-" + strings.ToUpper(what[:1]) + what[1:]
}

// view is the observation as the checks read it.
type view struct {
	obs *probe.Observation
	inf probe.Inference
	rs  []*res // decided results (no transport error, admitted or rejected), by send time
	// doneBefore[j] is the latest completion among the requests of
	// rs[j]'s key sent before it.
	doneBefore []time.Duration
	outside    []*results.Result // leftOut's, once asked (non-nil then)
}

// leftOut are the requests the view leaves out that may have drawn on the
// probe's quota (quietBetween), found once: grading asks for each result.
func (v *view) leftOut() []*results.Result {
	if v.obs == nil || v.outside != nil {
		return v.outside
	}
	inView := make(map[int]bool, len(v.rs))
	for _, r := range v.rs {
		inView[r.Seq] = true
	}
	untested := v.inf.Scope == probe.ScopeUntested || v.inf.Scope == ""
	v.outside = []*results.Result{}
	for i := range v.obs.Results {
		m := &v.obs.Results[i]
		if !inView[m.Seq] && (untested || probe.OwnTraffic(m.Phase, v.inf.Scope)) {
			v.outside = append(v.outside, m)
		}
	}
	return v.outside
}

func newView(obs *probe.Observation, inf probe.Inference) *view {
	v := &view{obs: obs, inf: inf}
	if obs == nil {
		return v
	}
	perConn := obs.PerConnection()
	for i := range obs.Results {
		r := &obs.Results[i]
		if r.Error != "" || !(r.Admitted() || r.Rejected()) || !probe.OwnTraffic(r.Phase, inf.Scope) {
			continue // another identity's answers say nothing of the probe's quota
		}
		if perConn {
			// Each connection is a client with its own quota (as the
			// replay counts it): a burst over 800 connections is 800
			// first requests, each with its own Remaining.
			c := *r
			c.Key = probe.ConnKey(r)
			r = &c
		}
		x := &res{Result: r, header: http.Header{}}
		for k, val := range r.Headers {
			x.header.Set(k, val)
		}
		if d := r.Headers["date"]; d != "" {
			if t, err := http.ParseTime(d); err == nil {
				x.date = t
			}
		}
		x.x, x.xErr = headers.ParseXRateLimit(x.header, x.date)
		x.ietf, x.ietfErr = headers.ParseIETF(x.header)
		if val, ok := r.Headers["retry-after"]; ok {
			x.ra, x.raLenient, x.hasRA = headers.ReadRetryAfterLeniently(val, x.date)
		}
		v.rs = append(v.rs, x)
	}
	sort.SliceStable(v.rs, func(i, j int) bool { return v.rs[i].Sent < v.rs[j].Sent })
	last := map[string]time.Duration{}
	for _, r := range v.rs {
		v.doneBefore = append(v.doneBefore, last[r.Key])
		last[r.Key] = max(last[r.Key], r.Done)
	}
	return v
}

func (v *view) rejections() []*res { return v.filter((*res).rejected) }
func (v *view) admissions() []*res { return v.filter((*res).admitted) }

func (r *res) rejected() bool { return r.Rejected() }
func (r *res) admitted() bool { return r.Admitted() }

func (v *view) filter(keep func(*res) bool) []*res {
	var out []*res
	for _, r := range v.rs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// bursts returns the results of each burst the plan released at one
// instant, by phase ("burst", "burst-1", ...) and within it by key (a
// client's quota is its own: a burst over several keys, or over many
// connections of a limit per connection, is that many clients' bursts),
// in the order they were sent.
func (v *view) bursts() [][]*res {
	type group struct{ phase, key string }
	byGroup := map[group][]*res{}
	var order []group
	for _, r := range v.rs {
		if !isBurst(r.Phase) {
			continue
		}
		g := group{r.Phase, r.Key}
		if _, ok := byGroup[g]; !ok {
			order = append(order, g)
		}
		byGroup[g] = append(byGroup[g], r)
	}
	out := make([][]*res, 0, len(order))
	for _, g := range order {
		out = append(out, byGroup[g])
	}
	return out
}

// noBurstReason says why the view holds no burst: the run had none, or
// none of its burst requests got a limiter decision (a server answering
// 500 to everything, a burst that failed).
func (v *view) noBurstReason() string {
	sent := 0
	statuses := map[string]int{}
	if v.obs != nil {
		for i := range v.obs.Results {
			r := &v.obs.Results[i]
			if !isBurst(r.Phase) {
				continue
			}
			sent++
			switch {
			case r.Error != "":
				statuses["no answer"]++
			default:
				statuses[strconv.Itoa(r.Status)]++
			}
		}
	}
	if sent == 0 {
		return "the run had no burst"
	}
	var parts []string
	for k, n := range statuses {
		parts = append(parts, fmt.Sprintf("%d × %s", n, k))
	}
	sort.Strings(parts)
	return fmt.Sprintf("none of the %d burst requests got a limiter decision (%s)", sent, strings.Join(parts, ", "))
}

// span is from the first send to the last completion of rs.
func span(rs []*res) time.Duration {
	if len(rs) == 0 {
		return 0
	}
	lo, hi := rs[0].Sent, rs[0].Done
	for _, r := range rs {
		lo, hi = min(lo, r.Sent), max(hi, r.Done)
	}
	return hi - lo
}

// refillRate is the inferred rate at which capacity returns continuously
// (buckets); 0 for families whose capacity returns in steps or not at all
// with time.
func (v *view) refillRate() float64 {
	if v.inf.Confidence < minConfidence {
		// An unsure inference's family says nothing of the refill: a
		// bucket of 10/s named a window at low confidence on a loaded CI
		// run left a burst's one refill (11 of 10) unexplained.
		return -1
	}
	switch v.inf.Family {
	case limiter.TokenBucket, limiter.LeakyShaping:
		return v.inf.RatePerS
	case probe.Inconclusive, "":
		return -1 // unknown
	}
	return 0
}

// slack is how many admissions capacity returning during d can explain.
func (v *view) slack(d time.Duration) int {
	r := v.refillRate()
	if r < 0 {
		return 1
	}
	if every := v.inf.RefillS; every > 0 && v.inf.Family == limiter.TokenBucket {
		// Refilled in clumps: any span may hold a fill instant, and a
		// longer one one per interval more.
		fills := math.Floor((d+v.obs.RTT).Seconds()/every) + 1
		return int(math.Ceil(r*every*fills - 1e-9))
	}
	n := r * (d + v.obs.RTT).Seconds()
	if n == 0 {
		return 0
	}
	return int(n) + 1
}

// burstSlack is how many admissions beyond the quota a burst may show
// honestly: capacity returning during it, or for a concurrency cap the
// slots freed by admitted requests that finished before the burst's last
// request went out.
func (v *view) burstSlack(b []*res) int {
	if v.inf.Family != limiter.Concurrency {
		return v.slack(span(b))
	}
	var last time.Duration
	for _, r := range b {
		last = max(last, r.Sent)
	}
	n := 0
	for _, r := range b {
		if r.Admitted() && r.Done <= last+v.obs.RTT {
			n++
		}
	}
	return n
}

// minConfidence is the inference confidence below which its parameters are
// not held against the headers.
const minConfidence = 0.5

// capacity is the inferred number of requests admitted at one instant from
// full (the bucket's size, the window's limit, the cap) with the
// inference's own uncertainty; 0 when unknown or not confident enough.
func (v *view) capacity() (n, err int, what string) {
	inf := v.inf
	if inf.Confidence < minConfidence {
		return 0, 0, ""
	}
	switch inf.Family {
	case limiter.TokenBucket:
		return inf.Burst, inf.BurstErr, "token_bucket burst"
	case limiter.LeakyShaping:
		return inf.Burst + 1, inf.BurstErr, "leaky_shaping queue + 1"
	case limiter.FixedWindow, limiter.SlidingLog, limiter.SlidingCounter:
		return inf.Limit, inf.LimitErr, inf.Family + " limit"
	case limiter.Concurrency:
		return inf.MaxInflight, 0, "concurrency cap"
	case limiter.Tiers:
		// What the composition admits at once: the tighter tier's when
		// all must admit, both tiers' when either does.
		if len(inf.Tiers) == 2 {
			a, b := tierCap(inf.Tiers[0]), tierCap(inf.Tiers[1])
			if inf.TiersMode == limiter.TiersEither {
				return a + b, inf.Tiers[0].BurstErr + inf.Tiers[0].LimitErr + inf.Tiers[1].BurstErr + inf.Tiers[1].LimitErr, "two tiers' capacity at once"
			}
			return min(a, b), 0, "the tighter tier's capacity"
		}
	}
	return 0, 0, ""
}

// tierCap is what one tier admits at once after idle.
func tierCap(t probe.TierFit) int {
	return limiter.Config{Algo: t.Family, Burst: t.Burst, Limit: t.Limit}.Capacity()
}

// periodS is the time the quota takes to come back whole, from the
// inference (window, or bucket refill from empty); 0 when unknown or not
// time-based.
func (v *view) periodS() float64 {
	inf := v.inf
	if inf.Confidence < minConfidence {
		return 0
	}
	switch inf.Family {
	case limiter.FixedWindow, limiter.SlidingLog, limiter.SlidingCounter:
		return inf.WindowS
	case limiter.TokenBucket:
		if inf.RatePerS > 0 && inf.RefillS > 0 {
			// Whole fills from empty: capacity comes back only at fills.
			return math.Ceil(float64(inf.Burst)/(inf.RatePerS*inf.RefillS)-1e-9) * inf.RefillS
		}
		if inf.RatePerS > 0 {
			return float64(inf.Burst) / inf.RatePerS
		}
	case limiter.LeakyShaping:
		if inf.RatePerS > 0 {
			return float64(inf.Burst+1) / inf.RatePerS
		}
	}
	return 0
}

// straddlesWindow reports whether rs may have crossed a wall-aligned window
// boundary (epoch multiples of the inferred window), where a window family
// legitimately admits a second quota.
func (v *view) straddlesWindow(rs []*res) bool {
	if resetsTwice(rs) {
		return true
	}
	// The inference's window only counts when the inference is sure of it.
	if (v.inf.Family != limiter.FixedWindow && v.inf.Family != limiter.SlidingCounter) || v.inf.Confidence < 0.5 {
		return false
	}
	w := time.Duration(v.inf.WindowS * float64(time.Second))
	if w <= 0 || len(rs) == 0 {
		return false
	}
	lo, hi := rs[0].Sent, rs[0].Done
	for _, r := range rs {
		lo, hi = min(lo, r.Sent), max(hi, r.Done)
	}
	a := v.obs.Start.Add(lo - v.obs.RTT).Truncate(w)
	b := v.obs.Start.Add(hi + v.obs.RTT).Truncate(w)
	return !a.Equal(b)
}

// seqs returns the sequence numbers of rs, at most n of them.
func seqs(rs []*res, n int) []int {
	var out []int
	for _, r := range rs {
		if len(out) == n {
			break
		}
		out = append(out, r.Seq)
	}
	return out
}

// addSeq appends seq numbers keeping at most maxSeqs and no repeats.
func addSeq(s []int, more ...int) []int {
	for _, m := range more {
		if len(s) >= maxSeqs {
			return s
		}
		dup := false
		for _, x := range s {
			dup = dup || x == m
		}
		if !dup {
			s = append(s, m)
		}
	}
	return s
}

// maxSeqs bounds the request numbers a check lists as evidence.
const maxSeqs = 12

// isBurst reports whether a plan phase is a burst released at one instant
// (the probe's bursts, and the one its silent waits may release to get a
// rejection from a concurrency cap).
func isBurst(phase string) bool {
	return phase == "burst" || strings.HasPrefix(phase, "burst-") || phase == "silent-burst"
}

// resetsTwice reports the server's own word that rs spans a window reset,
// independent of the inference (which a straddling burst can mislead): the
// admitted responses carry exactly two X-RateLimit-Reset values one policy
// window apart, each group counts down without repeating a Remaining, and
// the later group starts afresh above where the earlier one ended. A token
// bucket's resets also differ within a burst, but its later-reset group is
// the emptier one; a racing limiter repeats Remaining values.
func resetsTwice(rs []*res) bool {
	groups := map[float64][]*res{}
	var keys []float64
	w := int64(0)
	for _, r := range rs {
		if pw, ok := r.policyWindow(); ok {
			w = pw
		}
		if !r.admitted() || !r.x.Reset.Present || r.x.Reset.Err != nil || !r.x.Remaining.Present {
			continue
		}
		k := r.x.Reset.Value
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	if len(keys) != 2 || w <= 0 {
		return false
	}
	if keys[0] > keys[1] {
		keys[0], keys[1] = keys[1], keys[0]
	}
	if keys[1]-keys[0] != float64(w) {
		return false
	}
	for _, k := range keys {
		seen := map[int64]bool{}
		for _, r := range groups[k] {
			if seen[r.x.Remaining.Value] {
				return false
			}
			seen[r.x.Remaining.Value] = true
		}
	}
	// A fresh window counts down again from the top: the later group
	// reaches above the earlier group's lowest value. A bucket's later
	// (emptier) group stays below it.
	lowestEarlier, highestLater := int64(math.MaxInt64), int64(math.MinInt64)
	for _, r := range groups[keys[0]] {
		lowestEarlier = min(lowestEarlier, r.x.Remaining.Value)
	}
	for _, r := range groups[keys[1]] {
		highestLater = max(highestLater, r.x.Remaining.Value)
	}
	return highestLater > lowestEarlier
}
