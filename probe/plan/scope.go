package plan

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"time"

	"github.com/ratecheck/ratecheck/attack"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// The scope phase of the plan (probe/observation's scope.go reads it):
// exhaust the probe's own identity, then let each other identity it can
// present send scopeTrialShots requests at once, then one more of its own.
// A round that is unclear (the limit reopened meanwhile) is tried once
// more.
const (
	// scopeExhaustMax and scopeExhaustTime bound the sequential requests
	// that exhaust the probe's identity before a trial.
	scopeExhaustMax  = 250
	scopeExhaustTime = time.Second
	scopeRounds      = 2
	// scopeTrialTrips is about how many sequential round trips the trials
	// take (six identities, two rounds, a trial, a reference and a short
	// re-exhaustion each); the time held back for them is that many of the
	// calibration's round trips, within scopeTimeMin and scopeTimeMax (on
	// loopback they take tens of milliseconds, but a loaded machine's
	// scheduler adds its slices).
	scopeTrialTrips = 150
	scopeTimeMin    = 500 * time.Millisecond
	scopeTimeMax    = 3 * time.Second
)

// scopeIdentity is one trial: the shot it sends (fresh values per shot for
// the forged headers).
type scopeIdentity struct {
	phase string
	shot  func(i int) attack.Shot
}

// ScopeSources splits --source-addrs for a probe: the probe's own
// connections bind the first (none: the kernel's choice), the address
// trial the second. A loopback IPv4 target needs no list: all of
// 127.0.0.0/8 is local on Linux, so another loopback address is the second.
// why says why there is no second address.
func ScopeSources(u *url.URL, srcs []netip.Addr) (own []netip.Addr, second netip.Addr, why string) {
	if len(srcs) > 0 {
		own = srcs[:1]
	}
	if len(srcs) > 1 {
		return own, srcs[1], ""
	}
	host, err := netip.ParseAddr(u.Hostname())
	if err != nil || !host.Is4() || !host.IsLoopback() {
		return own, netip.Addr{}, "no second source address to try: pass --source-addrs with two of this machine's addresses"
	}
	taken := map[netip.Addr]bool{host: true, netip.MustParseAddr("127.0.0.1"): true}
	if len(own) > 0 {
		taken[own[0]] = true
	}
	a := netip.MustParseAddr("127.0.0.2")
	for taken[a] {
		a = a.Next()
	}
	return own, a, ""
}

// scopeTime is the time the trace and the deciding experiments leave the
// scope trials.
func (p *planner) scopeTime() time.Duration {
	return min(max(scopeTrialTrips*p.calibrationRTT(), scopeTimeMin), scopeTimeMax)
}

// scopeTrials runs the scope phase.
func (p *planner) scopeTrials(ctx context.Context) {
	if !p.oneKey() {
		p.note("scope trials not run: the requests went to several keys (--keys)")
		return
	}
	var own netip.Addr
	if len(p.opt.Engine.Sources) > 0 {
		own = p.opt.Engine.Sources[0]
	}
	var ids []scopeIdentity
	if p.opt.ScopeKey {
		ids = append(ids, scopeIdentity{observation.PhaseScopeOther, func(int) attack.Shot {
			return attack.Shot{Phase: observation.PhaseScopeOther, Key: "ratecheck-probe-other"}
		}})
	}
	if second := p.opt.SecondSource; second.IsValid() {
		ids = append(ids, scopeIdentity{observation.PhaseScopeIP, func(int) attack.Shot {
			return attack.Shot{Phase: observation.PhaseScopeIP, Source: second}
		}})
	} else {
		p.note("scope: %s", p.opt.SecondWhy)
	}
	if !p.opt.Engine.HTTP2 {
		ids = append(ids, scopeIdentity{observation.PhaseScopeConn, func(int) attack.Shot {
			return attack.Shot{Phase: observation.PhaseScopeConn, Source: own, Fresh: true}
		}})
	}
	n := 0
	forged := func(phase, format string) scopeIdentity {
		return scopeIdentity{phase, func(int) attack.Shot {
			n++ // a fresh value every request: a new client each time
			return attack.Shot{Phase: phase, Extra: []string{fmt.Sprintf(format, n%250+1)}}
		}}
	}
	ids = append(ids,
		forged(observation.PhaseScopeXFF, "X-Forwarded-For: 203.0.113.%d"),
		forged(observation.PhaseScopeXRealIP, "X-Real-IP: 198.51.100.%d"),
		forged(observation.PhaseScopeForwarded, "Forwarded: for=192.0.2.%d"))
	for _, id := range ids {
		for range scopeRounds {
			if ctx.Err() != nil {
				return
			}
			if p.left() < observation.ScopeTrialShots+2 {
				p.note("scope trials cut short: the request budget is spent")
				return
			}
			if p.e.Now() > p.deadline {
				p.note("scope trials cut short: the probe's time is spent")
				return
			}
			if why := p.exhaustOwn(ctx, observation.PhaseScopeRef); why != "" {
				p.note("scope trials not run: %s", why)
				return
			}
			for i := range observation.ScopeTrialShots {
				r, ok := p.e.Do(ctx, id.shot(i))
				if !ok || !observation.Decided(r) || r.Rejected() {
					break
				}
			}
			if _, ok := p.e.Do(ctx, attack.Shot{Phase: observation.PhaseScopeRef}); !ok {
				return
			}
			if p.trialOutcome(id.phase) != observation.TrialUnclear {
				break
			}
		}
	}
}

// exhaustOwn sends the probe's own requests of phase one at a time until
// one is rejected (bounded in number and time); why not, when none was.
func (p *planner) exhaustOwn(ctx context.Context, phase string) string {
	until := p.e.Now() + scopeExhaustTime
	admitted := 0
	for i := range scopeExhaustMax {
		switch {
		case p.left() < observation.ScopeTrialShots+2:
			return "the request budget is spent"
		case p.e.Now() > until:
			return fmt.Sprintf("none of %d requests one at a time over %s was rejected (%d admitted; a concurrency cap, or a queue, limits no identity that way)", i, scopeExhaustTime, admitted)
		}
		r, ok := p.e.Do(ctx, attack.Shot{Phase: phase})
		if !ok {
			return "the run ended"
		}
		if r.Error != "" {
			// No answer is no admission: the target is failing, and a
			// trial against it would show nothing.
			return fmt.Sprintf("a request to exhaust the probe's own identity got no answer (%s)", r.Error)
		}
		if observation.Decided(r) && r.Rejected() {
			return ""
		}
		if r.Admitted() {
			admitted++
		}
	}
	return fmt.Sprintf("none of %d requests one at a time was rejected (%d admitted)", scopeExhaustMax, admitted)
}

// trialOutcome is what the rounds of phase so far showed.
func (p *planner) trialOutcome(phase string) string {
	obs := &observation.Observation{}
	for _, r := range p.col.Results() {
		if r.Phase == observation.PhaseScopeRef || r.Phase == phase || r.Phase == observation.PhaseTrace {
			obs.Results = append(obs.Results, *r)
		}
	}
	for _, t := range obs.ScopeFindings().Trials {
		return t.Outcome
	}
	return observation.TrialUnclear
}
