package probe

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// Scope: whom the limit counts. After the probe's own identity is
// exhausted (a scope-ref request rejected), each other identity it can
// present sends a few requests at once (plan_scope.go): another key value
// (--key-header), another source address, a fresh connection, and the
// proxy headers a client can forge. An identity with capacity of its own
// admits every one of them while the probe's own stays rejected (the
// scope-ref sent right after); a shared one rejects the first. Read from the
// results alone, so a saved stream gives the same answer.

// The scope values (Inference.Scope).
const (
	ScopePerKey        = "per_key"
	ScopePerIP         = "per_ip"
	ScopePerConnection = "per_connection"
	ScopeGlobal        = "global"
)

// The scope trials' phases; phaseScopeRef and phaseScopeOther (the second
// key) are plan.go's.
const (
	phaseScopeIP        = "scope-ip"
	phaseScopeConn      = "scope-conn"
	phaseScopeXFF       = "scope-xff"
	phaseScopeXRealIP   = "scope-x-real-ip"
	phaseScopeForwarded = "scope-forwarded"
)

// scopeTrialShots is how many requests one trial sends: all admitted, right
// after a rejection, is capacity of its own — a refill or a window boundary
// between them would show on the scope-ref sent after.
const scopeTrialShots = 3

// trialIdentity names what a trial phase varies, for evidence and JSON.
var trialIdentity = map[string]string{
	phaseScopeOther:     "key",
	phaseScopeIP:        "address",
	phaseScopeConn:      "connection",
	phaseScopeXFF:       "X-Forwarded-For",
	phaseScopeXRealIP:   "X-Real-IP",
	phaseScopeForwarded: "Forwarded",
}

// spoofPhases are the trials that forge a proxy header from the exhausted
// address.
var spoofPhases = []string{phaseScopeXFF, phaseScopeXRealIP, phaseScopeForwarded}

// replayed reports whether the replay counts a request of phase, given the
// scope found: a trial sent as another identity is another client's
// traffic, counted only when the limit counts every identity together (or,
// for the second key, when it counts per key, under that key).
func replayed(phase, scope string) bool {
	if _, trial := trialIdentity[phase]; !trial {
		return true
	}
	return scope == ScopeGlobal || (scope == ScopePerKey && phase == phaseScopeOther)
}

// The outcomes of a trial.
const (
	TrialOwn     = "own"     // the identity had capacity of its own
	TrialShared  = "shared"  // rejected with the probe's own identity
	TrialUnclear = "unclear" // the probe's identity was not limited around it, or answers failed
)

// ScopeTrial is what one identity showed.
type ScopeTrial struct {
	Identity string `json:"identity"` // key, address, connection, X-Forwarded-For, X-Real-IP, Forwarded
	Outcome  string `json:"outcome"`  // own, shared, unclear
	Detail   string `json:"detail,omitempty"`
}

// ScopeFindings is the scope experiment read from the results.
type ScopeFindings struct {
	Scope  string
	Reason string // why untested
	Trials []ScopeTrial
	// Spoofable lists the forged headers that brought capacity back.
	Spoofable []string
	// SpoofTested: at least one forged-header trial was decisive.
	SpoofTested bool
}

// PerConnection reports whether the limit counts per connection and the
// results say which connection carried each request (a stream recorded
// before results named their connection does not).
func (o *Observation) PerConnection() bool {
	if o.scope() != ScopePerConnection {
		return false
	}
	for i := range o.Results {
		if o.Results[i].Conn != 0 {
			return true
		}
	}
	return false
}

// ConnKey is the replay's (and the grade's) key for a request when the limit counts per
// connection.
func ConnKey(r *results.Result) string { return r.Key + "\x00conn" + strconv.FormatInt(r.Conn, 10) }

// connCapacity is the most admissions any one connection had before its
// first rejection: the capacity a per-connection limit's seeds start from
// (the bursts' counts are of many connections at once).
func (o *Observation) connCapacity() int {
	admitted, shut := map[string]int{}, map[string]bool{}
	best := 0
	for _, ev := range o.events() {
		switch {
		case shut[ev.key]:
		case ev.admitted:
			admitted[ev.key]++
			best = max(best, admitted[ev.key])
		default:
			shut[ev.key] = true
		}
	}
	return best
}

// connRate is the rate one connection's capacity came back at, over a
// limit per connection: the busiest connection's admissions that each
// ended a run of its rejections, from one to the next. The trace's
// admissions spread over many connections, each a client of its own with
// capacity to spare, so their spacing says nothing about any one
// connection's refill; a connection knocking faster than its capacity
// comes back (the sustained phase's) is admitted as each unit returns, and
// only there — where it knocked slower, or fell silent, the spacing is its
// own. 0 when no connection showed two such returns in a row.
func (o *Observation) connRate() float64 {
	evs := o.events()
	n := map[string]int{}
	for _, ev := range evs {
		n[ev.key]++
	}
	busiest := ""
	for k, c := range n {
		if busiest == "" || c > n[busiest] || c == n[busiest] && k < busiest {
			busiest = k
		}
	}
	var gaps time.Duration
	count := 0
	// last: the previous admission that ended a run of rejections;
	// knocked: the run's latest rejection, which locates the return to
	// within the knocking's spacing — a return after a silence (a wait)
	// is located no better than the silence.
	var last, knocked time.Time
	rejected, between := false, false
	for _, ev := range evs {
		switch {
		case ev.key != busiest:
		case !ev.admitted:
			rejected, knocked = true, ev.at
		case rejected:
			if gap := ev.at.Sub(last); !last.IsZero() && !between && ev.at.Sub(knocked) <= gap/2 {
				gaps += gap
				count++
			}
			last, rejected, between = ev.at, false, false
		default:
			between = true // admitted without a rejection before: not a return
		}
	}
	if count < 2 || gaps <= 0 {
		return 0
	}
	return float64(count) / gaps.Seconds()
}

// scope is the scope the trials found (ScopeUntested when none could say).
func (o *Observation) scope() string { return o.scopeFindings().Scope }

// scopeFindings judges every trial of the run: per identity the first
// decisive round (own or shared), else the last unclear one.
func (o *Observation) scopeFindings() ScopeFindings {
	var rs []*results.Result
	for i := range o.Results {
		r := &o.Results[i]
		if r.Phase == phaseScopeRef || trialIdentity[r.Phase] != "" {
			rs = append(rs, r)
		}
	}
	sort.SliceStable(rs, func(a, b int) bool { return rs[a].Sent < rs[b].Sent })
	gap := o.refillGap()
	found := map[string]ScopeTrial{}
	var order []string
	var lastRef *results.Result
	for i := 0; i < len(rs); {
		if rs[i].Phase == phaseScopeRef {
			lastRef = rs[i]
			i++
			continue
		}
		j := i
		for j < len(rs) && rs[j].Phase == rs[i].Phase {
			j++
		}
		var after *results.Result
		if j < len(rs) && rs[j].Phase == phaseScopeRef {
			after = rs[j]
		}
		phase := rs[i].Phase
		t := judgeTrial(phase, lastRef, rs[i:j], after, gap)
		prev, seen := found[phase]
		if !seen {
			order = append(order, phase)
		}
		if !seen || prev.Outcome == TrialUnclear {
			found[phase] = t
		}
		i = j
	}
	var f ScopeFindings
	for _, ph := range order {
		f.Trials = append(f.Trials, found[ph])
	}
	for _, ph := range spoofPhases {
		if t, ok := found[ph]; ok && t.Outcome != TrialUnclear {
			f.SpoofTested = true
			if t.Outcome == TrialOwn {
				f.Spoofable = append(f.Spoofable, t.Identity)
			}
		}
	}
	outcome := func(ph string) string { return found[ph].Outcome }
	switch {
	case outcome(phaseScopeConn) == TrialOwn:
		f.Scope = ScopePerConnection
	case outcome(phaseScopeIP) == TrialOwn:
		f.Scope = ScopePerIP
	case outcome(phaseScopeOther) == TrialOwn:
		f.Scope = ScopePerKey
	case outcome(phaseScopeIP) == TrialShared && outcome(phaseScopeOther) != TrialUnclear:
		f.Scope = ScopeGlobal
	default:
		f.Scope = ScopeUntested
		f.Reason = untestedScopeReason(found)
		if len(found) == 0 && lastRef != nil {
			f.Reason = "the probe's own requests, sent one at a time, were not rejected, so no other identity could be compared with them (a concurrency cap or a queue limits requests in flight, not identities)"
		}
	}
	return f
}

// judgeTrial reads one round of a trial: ref is the probe's own request
// just before it, after the one just after.
//
// gap is the shortest time the trace saw the probe's own identity take to
// regain one admission (0: unknown): a round that took long enough for the
// refill to bring back its admissions (a loaded machine) tells nothing.
func judgeTrial(phase string, ref *results.Result, trial []*results.Result, after *results.Result, gap time.Duration) ScopeTrial {
	t := ScopeTrial{Identity: trialIdentity[phase]}
	if src := trial[0].Source; phase == phaseScopeIP && src != "" {
		t.Detail = "from " + src
	}
	first := trial[0]
	switch {
	case ref == nil || !decided(ref) || !ref.Rejected():
		t.Outcome, t.Detail = TrialUnclear, "the probe's own identity was not limited just before"
	case !decided(first):
		t.Outcome, t.Detail = TrialUnclear, "the trial got no limiter decision"
	case first.Rejected():
		t.Outcome = TrialShared
	default:
		admitted := 0
		for _, r := range trial {
			if decided(r) && r.Admitted() {
				admitted++
			}
		}
		switch {
		case admitted < scopeTrialShots || admitted < len(trial):
			t.Outcome, t.Detail = TrialUnclear, fmt.Sprintf("%d of %d admitted", admitted, len(trial))
		case after == nil || !decided(after) || !after.Rejected():
			t.Outcome, t.Detail = TrialUnclear, "the probe's own identity was admitted again right after: the limit reopened meanwhile"
		case gap > 0 && after.Sent-ref.Done >= time.Duration(admitted)*gap:
			t.Outcome, t.Detail = TrialUnclear, fmt.Sprintf("the round took %.0f ms, in which the refill (one admission per %.0f ms at best) could have brought its %d admissions back", float64(after.Sent-ref.Done)/1e6, float64(gap)/1e6, admitted)
		default:
			t.Outcome = TrialOwn
		}
	}
	return t
}

// refillGap is the shortest time between two of the trace's admissions with
// a rejection between them: how fast the probe's own identity regains one
// admission at best (0 when the trace shows none).
func (o *Observation) refillGap() time.Duration {
	var best, lastAdmit time.Duration
	seenAdmit, rejectedSince := false, false
	for _, r := range o.phase(phaseTrace) {
		switch {
		case !decided(&r):
		case r.Admitted():
			if seenAdmit && rejectedSince && (best == 0 || r.Sent-lastAdmit < best) {
				best = r.Sent - lastAdmit
			}
			seenAdmit, rejectedSince, lastAdmit = true, false, r.Sent
		default:
			rejectedSince = true
		}
	}
	return best
}

// untestedScopeReason says why no scope could be named.
func untestedScopeReason(found map[string]ScopeTrial) string {
	if len(found) == 0 {
		return "no scope trial ran (the probe ended first, or its requests went to several keys)"
	}
	var unclear []string
	for _, ph := range []string{phaseScopeOther, phaseScopeIP, phaseScopeConn} {
		if t, ok := found[ph]; ok && t.Outcome == TrialUnclear {
			unclear = append(unclear, t.Identity+": "+t.Detail)
		}
	}
	if len(unclear) > 0 {
		return "the scope trials were unclear (" + strings.Join(unclear, "; ") + ")"
	}
	if _, ok := found[phaseScopeIP]; !ok {
		return "the trials it could send were limited with the probe's own requests, but no second source address could be tried to tell a per-address limit from a global one: pass --source-addrs with two of this machine's addresses"
	}
	return "no trial was decisive"
}

// scopeFacts are the evidence lines of the scope experiment.
func scopeFacts(inf Inference) []string {
	var out []string
	for _, t := range inf.ScopeTrials {
		if slices.Contains(spoofIdentities(), t.Identity) {
			continue
		}
		s := "after exhaustion, another " + t.Identity
		if t.Detail != "" && t.Outcome != TrialUnclear {
			s += " (" + t.Detail + ")"
		}
		switch t.Outcome {
		case TrialOwn:
			s += fmt.Sprintf(" was admitted %d times while the probe's own stayed rejected: it has capacity of its own", scopeTrialShots)
		case TrialShared:
			s += " was rejected too: it shares the limit"
		default:
			s += " told nothing: " + t.Detail
		}
		out = append(out, s)
	}
	switch {
	case inf.Scope == ScopeUntested && inf.ScopeReason != "":
		out = append(out, "scope untested: "+inf.ScopeReason)
	case inf.Scope != ScopeUntested:
		out = append(out, "the limit is "+strings.ReplaceAll(inf.Scope, "_", " "))
	}
	switch {
	case len(inf.Spoofable) > 0:
		out = append(out, fmt.Sprintf("anyone can bypass this limit by sending %s: from the exhausted address, fresh values of %s were admitted", inf.Spoofable[0], strings.Join(inf.Spoofable, ", ")))
	case inf.SpoofTested:
		out = append(out, "fresh X-Forwarded-For, X-Real-IP and Forwarded values from the exhausted address were rejected: the limit does not trust them")
	}
	return out
}

func spoofIdentities() []string {
	out := make([]string, len(spoofPhases))
	for i, ph := range spoofPhases {
		out[i] = trialIdentity[ph]
	}
	return out
}

// setScope records the scope findings on the inference.
func (inf *Inference) setScope(f ScopeFindings) {
	inf.Scope, inf.ScopeReason, inf.ScopeTrials = f.Scope, f.Reason, f.Trials
	inf.Spoofable, inf.SpoofTested = f.Spoofable, f.SpoofTested
}

// OwnTraffic reports whether a request of phase is the probe's own traffic
// for a limit of this scope (Inference.Scope): what the grade judges the
// response contract on. A trial sent as another identity is not, unless
// the limit counts every identity together.
func OwnTraffic(phase, scope string) bool { return replayed(phase, scope) }

// IsSpoofTrial reports a phase that forged a proxy header.
func IsSpoofTrial(phase string) bool { return slices.Contains(spoofPhases, phase) }
