package plan

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/probe/bypass"
	"github.com/ratecheck/ratecheck/probe/observation"
	"github.com/ratecheck/ratecheck/results"
)

// The bypass phase of the plan (issue #33): with the probe's own key
// exhausted, each trial of probe/bypass sends its request between the
// key's own, as bypass.Next says, and an unclear trial is tried once more
// after the key is spent again.
const (
	// bypassShare is the most the suite adds to the probe's requests: it
	// must not change what the probe measures or costs.
	bypassShare = 0.10
	// bypassTimeMax bounds the time the suite adds to a probe; behind a
	// slow link it stops there and names the trials it did not run.
	bypassTimeMax = 2 * time.Second
	// bypassTripsPerTrial is about how many sequential round trips a trial
	// takes (an own request and the trial's, twice for a finding): the
	// time held back for the suite.
	bypassTripsPerTrial = 3
	// bypassAttempts: an unclear trial (the key recovered around it) is
	// tried again once, after the key is spent again.
	bypassAttempts = 2
)

// BypassBase is what the bypass trials of a request to u with method are
// made from. A recorded probe keeps its URL and method in the stream
// header; the rest (cookies, the methods the user allowed) only decides
// which trials run, and a trial that ran is read back by its name.
func BypassBase(method string, u *url.URL, http2, cookie bool, methods []string) bypass.Base {
	if method == "" {
		method = "GET"
	}
	return bypass.Base{Method: method, Target: u.RequestURI(), Cookie: cookie, Methods: methods, TLS: u.Scheme == "https", HTTP2: http2}
}

// bypassTime is the time the trace leaves the bypass trials.
func (p *planner) bypassTime() time.Duration {
	if p.opt.NoBypass {
		return 0
	}
	return min(time.Duration(bypassTripsPerTrial*len(bypass.Trials(p.opt.Bypass)))*p.calibrationRTT(), bypassTimeMax)
}

// bypassTrials runs the bypass phase.
func (p *planner) bypassTrials(ctx context.Context) {
	if p.opt.NoBypass {
		return
	}
	if !p.oneKey() {
		p.note("bypass trials not run: the requests went to several keys (--keys)")
		return
	}
	trials := bypass.Trials(p.opt.Bypass)
	allowance := int(bypassShare * float64(p.e.Sent()))
	first, until := p.e.Sent(), p.e.Now()+bypassTimeMax
	sent := map[string]int{}      // trial requests so far, per trial: Request(n) numbers them
	exhausted := p.lastRejected() // the last own request was rejected: the next trial may start at once
	found := map[bypass.Kind]bool{}
	for i, t := range trials {
		if found[t.Kind] {
			continue // the kind's check fails already: the budget goes to the others
		}
		for range bypassAttempts {
			if why := p.bypassStop(ctx, first+allowance, until); why != "" {
				p.note("bypass trials not run (%s): %s", why, trialNames(trials[i:], found))
				return
			}
			if !exhausted {
				// exhaustOwn ends at a rejected own request.
				if why := p.exhaustOwn(ctx, bypass.ExhaustPhase); why != "" {
					p.note("bypass trials not run: %s", why)
					return
				}
			}
			seq, ok := p.bypassTrial(ctx, t, sent)
			if !ok {
				return
			}
			exhausted = seq[len(seq)-1].Rejected
			outcome := bypass.Judge(seq).Outcome
			found[t.Kind] = found[t.Kind] || outcome == bypass.Found
			if outcome != bypass.Unclear {
				break
			}
		}
	}
}

// lastRejected: the plan's last request was rejected (the scope trials'
// reference request, say): the key is spent, and a trial may start at once.
func (p *planner) lastRejected() bool {
	rs := p.col.Results()
	if len(rs) == 0 {
		return false
	}
	last := rs[len(rs)-1]
	return last.Error == "" && last.Rejected() && observation.OwnTraffic(last.Phase, observation.ScopeUntested)
}

// bypassStop says why the suite must stop before its next attempt: its
// share of the requests (up to limit) or its time (until) spent, or the
// probe's own budget.
func (p *planner) bypassStop(ctx context.Context, limit int, until time.Duration) string {
	switch now := p.e.Now(); {
	case ctx.Err() != nil:
		return "the run ended"
	case p.e.Sent() >= limit:
		// A trial that finds a way around may still confirm it: up to
		// 2×Confirmations-1 requests past the share.
		return "the suite's share of the requests is spent"
	case p.left() < observation.ScopeTrialShots+2*bypass.Confirmations+1:
		return "the request budget is spent"
	case now > until:
		return "the suite's time is spent"
	case now > p.deadline:
		return "the probe's time is spent"
	}
	return ""
}

// bypassTrial runs one attempt of t, the key exhausted by the request just
// before (rejected): t's requests and the key's own, in the order
// bypass.Next says, until it is decided. ok is false when the run ended.
func (p *planner) bypassTrial(ctx context.Context, t bypass.Trial, sent map[string]int) (seq []bypass.Answer, ok bool) {
	seq = []bypass.Answer{{Own: true, Rejected: true}} // the rejection just before: bypass.Read finds it as seq-1
	for {
		own, done := bypass.Next(seq)
		if done {
			return seq, true
		}
		shot := attack.Shot{Phase: bypass.OwnPhase(t)}
		if !own {
			sent[t.Name]++
			shot = trialShot(t, sent[t.Name])
		}
		r, sentOK := p.e.Do(ctx, shot)
		if !sentOK {
			return seq, false
		}
		seq = append(seq, bypassAnswer(r, own))
	}
}

// trialShot is the n-th request of trial t.
func trialShot(t bypass.Trial, n int) attack.Shot {
	v := t.Request(n)
	return attack.Shot{Phase: bypass.TrialPhase(t), Method: v.Method, Target: v.Target, Extra: v.Set, Drop: v.Drop, Fresh: v.Fresh, OtherProtocol: v.OtherProtocol != ""}
}

// trialNames lists trials by name, but those of a kind already found.
func trialNames(ts []bypass.Trial, found map[bypass.Kind]bool) string {
	var names []string
	for _, t := range ts {
		if !found[t.Kind] {
			names = append(names, t.Name)
		}
	}
	return strings.Join(names, ", ")
}

// bypassAnswer is one result as the suite judges it.
func bypassAnswer(r *results.Result, own bool) bypass.Answer {
	a := bypass.Answer{Own: own}
	if r.Error == "" {
		a.Admitted, a.Rejected, a.Status = r.Admitted(), r.Rejected(), r.Status
	}
	return a
}
