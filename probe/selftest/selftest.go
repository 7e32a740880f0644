// Package selftest probes built-in reference limiters whose truth is known
// and scores the inference against it: the accuracy harness
// (`go test -tags accuracy ./probe/selftest/`) and `ratecheck demo` are made
// of these. It is apart from package probe so that the probe itself never
// depends on the reference server.
package selftest

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/targets/limiter"
	"github.com/ratecheck/ratecheck/targets/refserver"
)

// Outcome is one probe of a built-in target whose truth is known: the
// accuracy harness and `ratecheck demo` are made of these.
type Outcome struct {
	Spec      string          `json:"target"`
	Truth     limiter.Config  `json:"-"`
	TruthText string          `json:"truth"`
	Inference probe.Inference `json:"inference"`
	FamilyOK  bool            `json:"family_ok"`
	// Equivalent: not named, but listed as observationally equivalent.
	Equivalent bool               `json:"equivalent,omitempty"`
	ParamsOK   bool               `json:"params_ok"`
	ParamErrs  []string           `json:"param_errors,omitempty"` // which parameter missed its bar, by how much
	Requests   int                `json:"requests"`
	ElapsedS   float64            `json:"elapsed_s"`
	Observed   *probe.Observation `json:"-"`
}

// ProbeBuiltin starts the reference server spec names, probes it with the
// default plan, and scores the inference against the truth with the bars
// of the accuracy harness: rate and limit within ±10%, burst within
// ±max(1, 10%), window within ±10%.
func ProbeBuiltin(ctx context.Context, spec string, opt probe.Options) (Outcome, error) {
	sopt, err := refserver.ParseBuiltin(spec)
	if err != nil {
		return Outcome{}, err
	}
	srv, err := refserver.Start("127.0.0.1:0", sopt)
	if err != nil {
		return Outcome{}, err
	}
	defer srv.Close()
	req, err := attack.NewRequest("GET", srv.URL, nil, "")
	if err != nil {
		return Outcome{}, err
	}
	if opt.Target == "" {
		opt.Target = spec
	}
	res, err := probe.Run(ctx, req, opt)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Spec: spec, Truth: sopt.Limiter, TruthText: describe(sopt.Limiter), Inference: res.Inference,
		Requests: len(res.Observation.Results), ElapsedS: res.Elapsed.Seconds(), Observed: res.Observation}
	out.score()
	return out, nil
}

func describe(c limiter.Config) string {
	var s string
	switch c.Algo {
	case limiter.TokenBucket:
		s = fmt.Sprintf("token_bucket %g/s b=%d", c.Rate, c.Burst)
		if c.RefillEvery > 0 {
			s += fmt.Sprintf(" refill %s", c.RefillEvery)
		}
	case limiter.LeakyShaping:
		s = fmt.Sprintf("leaky_shaping %g/s burst=%d", c.Rate, c.Burst)
		if c.QueueUnbounded {
			s = fmt.Sprintf("leaky_shaping %g/s queue unbounded", c.Rate)
		}
	case limiter.FixedWindow:
		s = fmt.Sprintf("fixed_window %d/%s %s", c.Limit, c.Window, c.Align)
	case limiter.SlidingLog, limiter.SlidingCounter:
		s = fmt.Sprintf("%s %d/%s", c.Algo, c.Limit, c.Window)
		if c.Align == limiter.AlignStart || c.Align == limiter.AlignFirst {
			s += " " + c.Align
		}
	case limiter.Concurrency:
		s = fmt.Sprintf("concurrency %d", c.MaxInflight)
	case limiter.Tiers:
		s = fmt.Sprintf("tiers %s %s + %s", c.TierMode, c.Tiers[0], c.Tiers[1])
	default:
		s = c.Algo
	}
	if c.CountRejected {
		s += " counting"
	}
	if c.Restarts() {
		s += " restart"
	}
	if c.Block > 0 {
		s += fmt.Sprintf(" block %s", c.Block)
	}
	return s
}

func (o *Outcome) score() {
	t, inf := exercised(observable(o.Truth), o.Observed), o.Inference
	o.FamilyOK = inf.Family == t.Algo
	if !o.FamilyOK {
		for _, a := range inf.Alternatives {
			o.Equivalent = o.Equivalent || (a.Equivalent && a.Family == t.Algo)
		}
		return
	}
	rel := func(name string, got, want, tol float64) {
		if math.Abs(got-want) > tol {
			o.ParamErrs = append(o.ParamErrs, fmt.Sprintf("%s %g, truth %g", name, got, want))
		}
	}
	flag := func(name string, got, want bool) {
		if got != want {
			o.ParamErrs = append(o.ParamErrs, fmt.Sprintf("%s %v, truth %v", name, got, want))
		}
	}
	// A block at least as long as the refill hides it: every cycle starts
	// from a whole quota, and the window or rate never shows.
	hidden := func(refill time.Duration) bool { return t.Block > 0 && t.Block >= refill }
	if t.Block > 0 || t.Restarts() {
		kind, d := "", 0.0
		if inf.Penalty != nil {
			kind, d = inf.Penalty.Kind, inf.Penalty.DurationS
		}
		if want := t.PenaltyKind(); kind != want {
			o.ParamErrs = append(o.ParamErrs, fmt.Sprintf("penalty %q, truth %q", kind, want))
		} else if t.Block > 0 {
			rel("block", d, t.Block.Seconds(), 0.1*t.Block.Seconds())
		}
	}
	switch t.Algo {
	case limiter.LeakyShaping:
		rel("rate", inf.RatePerS, t.Rate, 0.1*t.Rate)
		flag("queue unbounded", inf.Queue == probe.QueueUnbounded, t.QueueUnbounded)
		if !t.QueueUnbounded {
			rel("burst", float64(inf.Burst), float64(t.Burst), math.Max(1, 0.1*float64(t.Burst)))
		}
		if t.DelayAfter > 0 {
			rel("delay", float64(inf.Delay), float64(t.DelayAfter), 0)
		}
	case limiter.TokenBucket:
		if !hidden(time.Duration(float64(t.Burst) / t.Rate * float64(time.Second))) {
			rel("rate", inf.RatePerS, t.Rate, 0.1*t.Rate)
		}
		rel("burst", float64(inf.Burst), float64(t.Burst), math.Max(1, 0.1*float64(t.Burst)))
		if t.RefillEvery > 0 || inf.RefillS > 0 {
			rel("refill_s", inf.RefillS, t.RefillEvery.Seconds(), 0.1*t.RefillEvery.Seconds())
		}
	case limiter.FixedWindow, limiter.SlidingLog, limiter.SlidingCounter:
		rel("limit", float64(inf.Limit), float64(t.Limit), 0.1*float64(t.Limit))
		if !hidden(t.Window) {
			rel("window", inf.WindowS, t.Window.Seconds(), 0.1*t.Window.Seconds())
		}
		// Denied attempts that count show in decisions only for the
		// sliding families (a fixed window resets at its boundary anyway).
		if t.Algo != limiter.FixedWindow {
			flag("counts_rejected", inf.CountsRejected != nil && *inf.CountsRejected, t.CountRejected)
		}
		// An alignment the probe could not tell apart from another is
		// not wrong if the truth is among them.
		if t.Align == limiter.AlignStart {
			flag("alignment start", alignmentNames(inf.Alignment, limiter.AlignStart), true)
		}
		if t.Algo == limiter.SlidingCounter && t.Align == limiter.AlignFirst {
			flag("alignment first", alignmentNames(inf.Alignment, limiter.AlignFirst), true)
		}
	case limiter.Concurrency:
		rel("max_inflight", float64(inf.MaxInflight), float64(t.MaxInflight), math.Max(1, 0.1*float64(t.MaxInflight)))
	case limiter.Tiers:
		if inf.TiersMode != t.TierMode || len(inf.Tiers) != 2 {
			o.ParamErrs = append(o.ParamErrs, fmt.Sprintf("tiers mode %q (%d tiers), truth %q", inf.TiersMode, len(inf.Tiers), t.TierMode))
			break
		}
		for i, want := range t.Tiers {
			got := inf.Tiers[i]
			name := fmt.Sprintf("t%d ", i+1)
			if got.Family != want.Algo {
				o.ParamErrs = append(o.ParamErrs, fmt.Sprintf("%sfamily %s, truth %s", name, got.Family, want.Algo))
				continue
			}
			switch want.Algo {
			case limiter.TokenBucket, limiter.LeakyShaping:
				rel(name+"rate", got.RatePerS, want.Rate, 0.1*want.Rate)
				rel(name+"burst", float64(got.Burst), float64(want.Burst), math.Max(1, 0.1*float64(want.Burst)))
			default:
				rel(name+"limit", float64(got.Limit), float64(want.Limit), math.Max(1, 0.1*float64(want.Limit)))
				rel(name+"window", got.WindowS, want.Window.Seconds(), 0.1*want.Window.Seconds())
				if want.Algo != limiter.FixedWindow { // a fixed window's count shows in no decision
					flag(name+"counts_rejected", got.CountsRejected != nil && *got.CountsRejected, want.CountRejected)
				}
			}
		}
	}
	o.ParamsOK = len(o.ParamErrs) == 0
}

// observable is the limiter a truth behaves as: a token bucket refilled
// in clumps that each fill it whole is, decision for decision, a fixed
// window of its capacity on its fill grid (probe names it so: see
// fullFillWindows).
func observable(t limiter.Config) limiter.Config {
	if t.Algo == limiter.TokenBucket && t.RefillEvery > 0 && t.Rate*t.RefillEvery.Seconds() >= float64(t.Burst) {
		w := t
		w.Algo, w.Limit, w.Window, w.Align = limiter.FixedWindow, t.Burst, t.RefillEvery, limiter.AlignStart
		w.Rate, w.Burst, w.RefillEvery = 0, 0, 0
		return w
	}
	if single, ok := limiter.BindingTier(t); ok {
		return single
	}
	if t.Algo == limiter.SlidingLog && t.Limit == 1 && !t.CountRejected && t.Block == 0 && !t.Restarts() {
		// A log of one admits only a whole window after the last
		// admission, and a denied attempt changes nothing — exactly a
		// token bucket of one token refilled at one per window.
		b := t
		b.Algo, b.Burst, b.Rate = limiter.TokenBucket, 1, 1/t.Window.Seconds()
		b.Limit, b.Window = 0, 0
		return b
	}
	if t.Algo == limiter.LeakyShaping && t.Burst > 0 && !t.QueueUnbounded && t.DelayAfter > 0 &&
		float64(t.Burst-t.DelayAfter)/t.Rate < probe.DelayResolution.Seconds() {
		// nginx limit_req with delay=: it admits what a token bucket of
		// burst+1 admits, and the requests past delay= are held at most
		// (burst−delay)/rate — under what a probe resolves, they are
		// the bucket's (292/s, burst=22, delay=17 holds them 17 ms).
		b := t
		b.Algo, b.Burst, b.DelayAfter = limiter.TokenBucket, t.Burst+1, 0
		return b
	}
	if t.Algo == limiter.LeakyShaping && t.Burst == 0 && !t.QueueUnbounded {
		// nginx limit_req with burst=0 has no queue: a request is admitted
		// only 1/rate after the last admission, and rejected otherwise, with
		// no delay — exactly a token bucket of one token at that rate.
		b := t
		b.Algo, b.Burst, b.DelayAfter = limiter.TokenBucket, 1, 0
		return b
	}
	return t
}

// exercised is the limiter a composition t behaved as in the run o: the
// one tier that decides every request of it as the composition does,
// when the other changed no decision (a window of 160 per 3 min beside a
// bucket of 12.68/s, in a probe that had 88 requests admitted before it
// ended). No probe of that run could have named the tier that never bound,
// so the one that did is what a right answer names. (observable is the
// same for every run a truth can have; this is for the one it had.)
func exercised(t limiter.Config, o *probe.Observation) limiter.Config {
	if t.Algo != limiter.Tiers || o == nil {
		return t
	}
	whole, err := probe.Replay(o, t)
	if err != nil {
		return t
	}
	for _, tier := range t.Tiers {
		alone := tier.Config(t.Origin)
		if r, err := probe.Replay(o, alone); err == nil && sameAnswers(r, whole) {
			return alone
		}
	}
	return t
}

// sameAnswers says whether two replays of one observation admit, and
// miss, the same requests.
func sameAnswers(a, b probe.Replayed) bool {
	if len(a.Requests) != len(b.Requests) {
		return false
	}
	for i, r := range a.Requests {
		if r.Admitted != b.Requests[i].Admitted || r.Mismatch != b.Requests[i].Mismatch {
			return false
		}
	}
	return true
}

// demoTargets are one built-in target per family, then one per variant (a
// counter that counts denied attempts, a pacer, a grid anchored at the
// server's start, a window restarted by every over-limit request, a bucket
// refilled in clumps, nginx delay=N, a bucket with a burst pool beside it), small
// enough that the whole demo takes two or three minutes. (A key blocked
// after a rejection for longer than its refill is a first-aligned fixed
// window in disguise: named, but never with the confidence a demo row
// needs; the accuracy matrix has it.)
var demoTargets = [...]string{
	"builtin:none",
	"builtin:token_bucket?rate=10/s&burst=20",
	"builtin:leaky_shaping?rate=10/s&burst=5",
	"builtin:fixed_window?limit=20&window=2s",
	"builtin:sliding_log?limit=20&window=2s",
	"builtin:sliding_counter?limit=20&window=2s",
	"builtin:concurrency?max-inflight=5&latency=50ms",
	"builtin:sliding_counter?limit=10&window=2s&count-rejected=on",
	"builtin:leaky_shaping?rate=20/s&burst=unbounded",
	"builtin:sliding_counter?limit=24&window=4s&align=start",
	"builtin:fixed_window?limit=10&window=2s&penalty=restart",
	"builtin:token_bucket?rate=10/s&burst=20&refill=1s",
	"builtin:leaky_shaping?rate=10/s&burst=10&delay=4",
	"builtin:tiers?mode=either&t1=token_bucket:rate=4/s,burst=4&t2=fixed_window:limit=8,window=2s",
}

// DemoTargets are the demo's targets (a new slice each call).
func DemoTargets() []string { return append([]string(nil), demoTargets[:]...) }

// alignmentNames reports whether the inference's alignment is want, alone
// or among those it says it could not tell apart ("first or start
// (indistinguishable here)").
func alignmentNames(got, want string) bool {
	head, _, _ := strings.Cut(got, " (")
	return slices.Contains(strings.Split(head, " or "), want)
}
