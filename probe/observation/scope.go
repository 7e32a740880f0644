package observation

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/probe/bypass"
	"github.com/ratecheck/ratecheck/results"
)

// Scope: whom the limit counts. After the probe's own identity is
// exhausted (a scope-ref request rejected), each other identity it can
// present sends a few requests at once (probe/plan's scope.go): another
// key value (--key-header), another source address, a fresh connection,
// and the proxy headers a client can forge. An identity with capacity of its own
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

// ScopeTrialShots is how many requests one trial sends: all admitted, right
// after a rejection, is capacity of its own — a refill or a window boundary
// between them would show on the scope-ref sent after.
const ScopeTrialShots = 3

// trialIdentity names what a trial phase varies, for evidence and JSON.
var trialIdentity = map[string]string{
	PhaseScopeOther:     "key",
	PhaseScopeIP:        "address",
	PhaseScopeConn:      "connection",
	PhaseScopeXFF:       "X-Forwarded-For",
	PhaseScopeXRealIP:   "X-Real-IP",
	PhaseScopeForwarded: "Forwarded",
}

// SpoofPhases are the trials that forge a proxy header from the exhausted
// address.
var SpoofPhases = []string{PhaseScopeXFF, PhaseScopeXRealIP, PhaseScopeForwarded}

// OwnTraffic reports whether a request of phase is the probe's own traffic
// for a limit of this scope: what the replay counts and the grade judges
// the response contract on. A trial sent as another identity is another
// client's traffic, counted only when the limit counts every identity
// together (or, for the second key, when it counts per key, under that key).
// A bypass trial's request never is: one that got around the limit was
// counted by another counter, if any (one the limit held is replayed all
// the same: Counted).
func OwnTraffic(phase, scope string) bool {
	if bypass.IsTrial(phase) {
		return false
	}
	if _, trial := trialIdentity[phase]; !trial {
		return true
	}
	return scope == ScopeGlobal || (scope == ScopePerKey && phase == PhaseScopeOther)
}

// Counted reports whether the limit counted r where it counts the probe's
// own traffic: its own traffic (OwnTraffic), and a bypass trial it held —
// rejected, so decided by the exhausted key's counter, which a limiter that
// counts denied attempts charged for it. Seventeen held trials left out of
// the replay of a counting sliding counter of 50 per minute made the true
// model admit 8 of a later volley the server rejected.
func Counted(r *results.Result, scope string) bool {
	if bypass.IsTrial(r.Phase) {
		return r.Rejected()
	}
	return OwnTraffic(r.Phase, scope)
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
	if o.Scope() != ScopePerConnection {
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

// Scope is the scope the trials found (ScopeUntested when none could say).
func (o *Observation) Scope() string { return o.ScopeFindings().Scope }

// ScopeFindings judges every trial of the run: per identity the first
// decisive round (own or shared), else the last unclear one.
func (o *Observation) ScopeFindings() ScopeFindings {
	var rs []*results.Result
	for i := range o.Results {
		r := &o.Results[i]
		if r.Phase == PhaseScopeRef || trialIdentity[r.Phase] != "" {
			rs = append(rs, r)
		}
	}
	sort.SliceStable(rs, func(a, b int) bool { return rs[a].Sent < rs[b].Sent })
	gap := o.refillGap()
	found := map[string]ScopeTrial{}
	var order []string
	var lastRef *results.Result
	for i := 0; i < len(rs); {
		if rs[i].Phase == PhaseScopeRef {
			lastRef = rs[i]
			i++
			continue
		}
		j := i
		for j < len(rs) && rs[j].Phase == rs[i].Phase {
			j++
		}
		var after *results.Result
		if j < len(rs) && rs[j].Phase == PhaseScopeRef {
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
	for _, ph := range SpoofPhases {
		if t, ok := found[ph]; ok && t.Outcome != TrialUnclear {
			f.SpoofTested = true
			if t.Outcome == TrialOwn {
				f.Spoofable = append(f.Spoofable, t.Identity)
			}
		}
	}
	outcome := func(ph string) string { return found[ph].Outcome }
	switch {
	case outcome(PhaseScopeConn) == TrialOwn:
		f.Scope = ScopePerConnection
	case outcome(PhaseScopeIP) == TrialOwn:
		f.Scope = ScopePerIP
	case outcome(PhaseScopeOther) == TrialOwn:
		f.Scope = ScopePerKey
	case outcome(PhaseScopeIP) == TrialShared && outcome(PhaseScopeOther) != TrialUnclear:
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
	if src := trial[0].Source; phase == PhaseScopeIP && src != "" {
		t.Detail = "from " + src
	}
	first := trial[0]
	switch {
	case ref == nil || !Decided(ref) || !ref.Rejected():
		t.Outcome, t.Detail = TrialUnclear, "the probe's own identity was not limited just before"
	case !Decided(first):
		t.Outcome, t.Detail = TrialUnclear, "the trial got no limiter decision"
	case first.Rejected():
		t.Outcome = TrialShared
	default:
		admitted := 0
		for _, r := range trial {
			if Decided(r) && r.Admitted() {
				admitted++
			}
		}
		switch {
		case admitted < ScopeTrialShots || admitted < len(trial):
			t.Outcome, t.Detail = TrialUnclear, fmt.Sprintf("%d of %d admitted", admitted, len(trial))
		case after == nil || !Decided(after) || !after.Rejected():
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
	for _, r := range o.Phase(PhaseTrace) {
		switch {
		case !Decided(&r):
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
	for _, ph := range []string{PhaseScopeOther, PhaseScopeIP, PhaseScopeConn} {
		if t, ok := found[ph]; ok && t.Outcome == TrialUnclear {
			unclear = append(unclear, t.Identity+": "+t.Detail)
		}
	}
	if len(unclear) > 0 {
		return "the scope trials were unclear (" + strings.Join(unclear, "; ") + ")"
	}
	if _, ok := found[PhaseScopeIP]; !ok {
		return "the trials it could send were limited with the probe's own requests, but no second source address could be tried to tell a per-address limit from a global one: pass --source-addrs with two of this machine's addresses"
	}
	return "no trial was decisive"
}

// SpoofIdentities name the forged headers the trials sent.
func SpoofIdentities() []string {
	out := make([]string, len(SpoofPhases))
	for i, ph := range SpoofPhases {
		out[i] = trialIdentity[ph]
	}
	return out
}

// IsSpoofTrial reports a phase that forged a proxy header.
func IsSpoofTrial(phase string) bool { return slices.Contains(SpoofPhases, phase) }
