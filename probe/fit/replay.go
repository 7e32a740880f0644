package fit

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// Replaying a model is how every part of ratecheck compares a limiter model
// with what a target did: the fit scores each candidate with it, grading
// asks whether an advertised limit explains the decisions, and the report
// draws what the inferred model admits. They all go through Replay (the
// fit through its bounded fast path, replay), so they agree exactly.

// Replayed is a limiter model replayed over an observation's decided
// requests.
type Replayed struct {
	Config limiter.Config
	// Offset is the shift of the server's clock against ours (within the
	// arrival uncertainty) at which the model explains the decisions best;
	// 0 for a model that does not depend on absolute time.
	Offset time.Duration
	// Requests are the model's answers, one per decided request (not a
	// transport error or an unrelated status), in send order.
	Requests []ReplayedRequest
	// Mismatches counts the requests whose decision, or queueing delay,
	// the model gets wrong.
	Mismatches int
}

// ReplayedRequest is the model's answer to one observed request.
type ReplayedRequest struct {
	Index    int  // of the request in Observation.Results
	Admitted bool // whether the model admits it
	Mismatch bool // the model decides otherwise, or queues it otherwise, than the target did
}

// Explained is how many decisions the model reproduces.
func (r Replayed) Explained() int { return len(r.Requests) - r.Mismatches }

// Replay runs the limiter model cfg over o's decided requests as the
// inference does: each arrives half a round trip after its send; within a
// burst, whose order at the server nobody can see, the admitted go first;
// a decision the model makes otherwise only within the timing uncertainty
// of the round trip is not a mismatch; and a model that depends on
// absolute time is tried at the clock offsets the uncertainty allows,
// keeping the best. Keys are the requests' own, unless the probe found the
// limit global.
func Replay(o *observation.Observation, cfg limiter.Config) (Replayed, error) {
	if o == nil {
		return Replayed{}, fmt.Errorf("replay: no observation")
	}
	if _, err := limiter.New(cfg); err != nil {
		return Replayed{}, fmt.Errorf("replay: %w", err)
	}
	evs := o.Events()
	unc := observation.DecisionUncertainty(o.RTT)
	best := Replayed{Config: cfg, Mismatches: math.MaxInt}
	answers := make([]answer, len(evs))
	for _, off := range replayOffsets(cfg, o.RTT) {
		m := ReplayEvents(evs, cfg, off, unc, math.MaxInt, answers)
		if m > best.Mismatches || m == best.Mismatches && off.Abs() >= best.Offset.Abs() {
			continue
		}
		best.Offset, best.Mismatches = off, m
		best.Requests = make([]ReplayedRequest, len(evs))
		for i, ev := range evs {
			best.Requests[i] = ReplayedRequest{Index: ev.Index, Admitted: answers[i].admitted, Mismatch: answers[i].mismatch}
		}
	}
	// The time line is in the server's likely order, which within a burst
	// is not the send order: report the answers in send order.
	sortBySend(o, best.Requests)
	return best, nil
}

// replayOffsets are the clock offsets a model is replayed at: a
// wall-aligned window (and a sliding counter, whose weights follow wall
// windows) depends on absolute time, known only to the arrival
// uncertainty; the other models only on the time between requests.
func replayOffsets(cfg limiter.Config, rtt time.Duration) []time.Duration {
	if onWallGrid(cfg) || cfg.Algo == limiter.Tiers && tiersOnWall(cfg) {
		// (A start grid's phase is a fitted parameter: it takes the
		// offset's place; a grid a key's first request anchors moves
		// with it.)
		eps := observation.ArrivalUncertainty(rtt)
		return []time.Duration{-eps, 0, eps}
	}
	return []time.Duration{0}
}

// answer is the model's answer to one event.
type answer struct{ admitted, mismatch bool }

// placed is where a replay judges ev: its instant moved by the clock
// offset (most replays are at no offset: the Add is skipped), and the
// timing uncertainty it is judged within, the replay's or, wider, its own.
func placed(ev *observation.Event, offset, unc time.Duration) (time.Time, time.Duration) {
	at := ev.At
	if offset != 0 {
		at = at.Add(offset)
	}
	return at, max(unc, ev.Slack)
}

// tally scores a replay: it counts the mismatches and, when out is not
// nil, records each event's answer in it.
type tally struct {
	out   []answer
	bound int
	mis   int
}

// add scores event i's answer and reports whether it was a mismatch past
// the bound: the replay stops counting there.
func (t *tally) add(i int, admitted, miss bool) (over bool) {
	if t.out != nil {
		t.out[i] = answer{admitted, miss}
	}
	if !miss {
		return false
	}
	t.mis++
	return t.mis > t.bound
}

// DelayNoise is the queueing delay timer slack and scheduling on a loaded
// machine add or take away by themselves.
const DelayNoise = 25 * time.Millisecond

// delayRateShare is the share of a predicted queueing delay a small error
// in the rate may account for (a fifth).
const delayRateShare = 5

// DelayTolerance is how far an observed queueing delay may be from the
// model's before it counts as a mismatch.
func DelayTolerance(pred time.Duration) time.Duration {
	return max(DelayNoise, pred/delayRateShare)
}

// ReplayEvents runs the events through a fresh model and counts mismatches. unc
// is the timing uncertainty of a decision (and of a concurrency release):
// a decision that the model makes differently only within unc of it is not
// a mismatch.
//
// It is the fit's hot loop: it stops counting once mismatches exceed bound
// (the fit only keeps the best candidates, so the exact count of a worse
// one is never needed), and records each event's answer in out only when
// out is not nil.
func ReplayEvents(evs []observation.Event, cfg limiter.Config, offset, unc time.Duration, bound int, out []answer) int {
	if cfg.Algo == limiter.Concurrency {
		lim, err := limiter.New(cfg)
		if err != nil {
			return math.MaxInt32
		}
		return ReplayConcurrency(evs, lim, offset, unc, bound, out)
	}
	return replayTimeline(placeEvents(evs, offset, unc), cfg, bound, out)
}

// replayTimeline is ReplayEvents of a model that is not a concurrency cap
// on events placed already: a grid's replays share one placement.
func replayTimeline(tl timeline, cfg limiter.Config, bound int, out []answer) int {
	lim, err := limiter.New(cfg)
	if err != nil {
		return math.MaxInt32
	}
	return replayOn(lim, tl, bound, out, cfg.RejectionsInert())
}

// ReplayOn is replay on a model built already, left in the state the
// events put it in (what the plan's tie-splitting simulates onward from).
func ReplayOn(lim limiter.Limiter, evs []observation.Event, offset, unc time.Duration, bound int, out []answer) int {
	return replayOn(lim, placeEvents(evs, offset, unc), bound, out, lim.Config().RejectionsInert())
}

// timeline is a run's events placed for replays at one clock offset and
// timing uncertainty: where each is judged as an admission and as a
// rejection, beside what the replay compares. Every candidate of a grid
// is replayed on the same placement, so it is computed once per grid, not
// once per candidate (time.Time's arithmetic was a tenth of a fit), and a
// replay reads 96 bytes an event, not an Event's 224 and more.
type timeline []placement

// placement is where a replay judges one event, and what it compares.
type placement struct {
	// admitted is the event's instant moved by the clock offset, and unc
	// the uncertainty it is judged within: the replay's or, wider, its own.
	admitted time.Time
	unc      time.Duration
	// rejected is where a rejection is judged: as early as the uncertainty
	// allows (capacity only grows with time between decisions), never
	// before the key's previous decision, then moved by the offset.
	rejected time.Time
	// The event's own: see observation.Event.
	key                           string
	delay, noise                  time.Duration
	wasAdmitted, lone, judgeDelay bool
}

// placeEvents places evs for replays at offset within unc.
func placeEvents(evs []observation.Event, offset, unc time.Duration) timeline {
	tl := make(timeline, len(evs))
	for i := range evs {
		ev := &evs[i]
		at, u := placed(ev, offset, unc)
		rej := observation.Later(ev.At.Add(-u), ev.Floor)
		if offset != 0 {
			rej = rej.Add(offset)
		}
		tl[i] = placement{admitted: at, unc: u, rejected: rej, key: ev.Key, delay: ev.Delay, noise: ev.Noise,
			wasAdmitted: ev.Admitted, lone: ev.Lone, judgeDelay: ev.JudgeDelay}
	}
	return tl
}

// replayOn is ReplayOn on a placed time line. On a model whose rejections
// are inert (skip) it passes over the rejections the model's last refusal
// of the key covers (limiter.RefusedUntil) without asking it: they match,
// and would not move it. Instants never go back past a passed-over
// rejection: a rejection is judged no earlier than the arrival before it,
// an admission at its arrival or later.
func replayOn(lim limiter.Limiter, tl timeline, bound int, out []answer, skip bool) int {
	score := tally{out: out, bound: bound}
	// The last refusal: of which key, from when until when (an empty span
	// once the model admitted anything since).
	var refusedKey string
	var refusedFrom, refusedUntil time.Time
	for i := range tl {
		ev := &tl[i] // not a copy: this is the fit's hot loop
		var at time.Time
		var d limiter.Decision
		switch {
		case ev.lone:
			d.Allowed = true // a key's first request (see event.lone)
		case ev.wasAdmitted:
			at = ev.admitted
			d = lim.Allow(ev.key, at)
			// Within timing uncertainty of the instant capacity returns:
			// the server's clock may have been that far ahead of our
			// estimate, so take the request as arriving then.
			if !d.Allowed && d.RetryAfter > 0 && d.RetryAfter <= ev.unc {
				at = at.Add(d.RetryAfter)
				d = lim.Allow(ev.key, at)
			}
		default:
			at = ev.rejected
			if skip && ev.key == refusedKey && at.Before(refusedUntil) && !at.Before(refusedFrom) {
				score.add(i, false, false)
				continue
			}
			d = lim.Allow(ev.key, at)
		}
		if skip {
			if d.Allowed {
				refusedUntil = refusedFrom
			} else {
				refusedKey, refusedFrom, refusedUntil = ev.key, at, limiter.RefusedUntil(at, d)
			}
		}
		miss := false
		switch {
		case d.Allowed != ev.wasAdmitted:
			miss = true
		case d.Allowed && d.Delay > 0 && (d.Delay-ev.delay).Abs() > DelayTolerance(d.Delay):
			miss = true // the model queues it, and not by that much
		case d.Allowed && d.Delay == 0 && ev.judgeDelay && ev.delay > ev.noise+DelayTolerance(0):
			miss = true // held back where the model serves at once
		}
		if score.add(i, d.Allowed, miss) {
			return score.mis
		}
	}
	return score.mis
}

// unreleasedWithin counts the releases in rels that may not have happened
// yet at instant at: estimated within unc before it, of a request whose
// answer the client had not read before sending the one arriving then.
func unreleasedWithin(rels []release, at time.Time, unc time.Duration, sent time.Time) int {
	n := 0
	for _, r := range rels {
		if at.Sub(r.at) <= unc && (r.answered.IsZero() || sent.IsZero() || r.answered.After(sent)) {
			n++
		}
	}
	return n
}

// release is a concurrency slot the replay freed: when, of which key, how
// much earlier it may really have been, and when the client read the
// answer (zero: unknown).
type release struct {
	at       time.Time
	key      string
	lag      time.Duration
	answered time.Time
}

// ReplayConcurrency interleaves releases with arrivals. When a release and
// an arrival are closer than unc, their true order is unknown: a decision
// that the other order explains is not a mismatch, and the model follows
// the observed decision.
//
// A release instant is estimated from when we read the response, so a
// client busy elsewhere (a loaded machine) puts it late, never early: a
// request held longer than the fastest one may have been released up to
// that much earlier (up to maxReadLag), and an admission that such an
// earlier release explains is no mismatch either.
func ReplayConcurrency(evs []observation.Event, lim limiter.Limiter, offset, unc time.Duration, bound int, out []answer) int {
	fastest := time.Duration(-1)
	for _, ev := range evs {
		if ev.Admitted && (fastest < 0 || ev.Hold < fastest) {
			fastest = ev.Hold
		}
	}
	var pending []release
	released := map[string][]release{} // recent releases per key
	score := tally{out: out, bound: bound}
	for i := range evs {
		ev := &evs[i] // not a copy: this is the fit's hot loop
		at, unc := placed(ev, offset, unc)
		keep := pending[:0]
		for _, p := range pending {
			if !p.at.After(at) {
				lim.Release(p.key, p.at)
				released[p.key] = append(released[p.key], p)
			} else {
				keep = append(keep, p)
			}
		}
		pending = keep
		d := lim.Allow(ev.Key, at)
		miss := false
		if d.Allowed != ev.Admitted {
			excused := false
			if ev.Admitted {
				// Would an imminent release have made room?
				for j, p := range pending {
					if p.key == ev.Key && p.at.Sub(at) <= unc+p.lag {
						lim.Release(p.key, at)
						pending = append(pending[:j], pending[j+1:]...)
						d = lim.Allow(ev.Key, at)
						excused = d.Allowed
						break
					}
				}
			} else {
				// Did releases just before take slots they may not have
				// freed yet? Then follow the server: undo the admission —
				// if enough of them were still held to fill the cap (the
				// model had d.Remaining slots free after this admission).
				// Not a release the client had read the answer of before
				// sending this one: the server had let it go by then. A
				// single release excused any rejection, and a cap that
				// holds nothing was named for a token bucket behind a
				// 64 ms round trip, every rejection "just after" a release.
				if unreleasedWithin(released[ev.Key], at, unc, ev.Sent) > d.Remaining {
					lim.Release(ev.Key, at)
					d.Allowed, excused = false, true
				}
			}
			miss = !excused
		}
		if d.Allowed {
			pending = append(pending, release{at.Add(ev.Hold), ev.Key, min(max(ev.Hold-fastest, 0), maxReadLag), ev.Answered})
			if ev.Admitted && ev.JudgeDelay && ev.Delay > ev.Noise+DelayTolerance(0) {
				miss = true // a concurrency cap never queues
			}
		}
		if score.add(i, d.Allowed, miss) {
			return score.mis
		}
		// forget releases older than unc
		for k, ts := range released {
			n := 0
			for n < len(ts) && at.Sub(ts[n].at) > unc {
				n++
			}
			released[k] = ts[n:]
		}
	}
	return score.mis
}

// maxReadLag bounds how late a loaded client may read a response and still
// have the release excused: a few scheduler time slices.
const maxReadLag = 5 * time.Millisecond

// sortBySend puts replayed requests in send order.
func sortBySend(o *observation.Observation, rs []ReplayedRequest) {
	sort.SliceStable(rs, func(a, b int) bool {
		ra, rb := &o.Results[rs[a].Index], &o.Results[rs[b].Index]
		if ra.Sent != rb.Sent {
			return ra.Sent < rb.Sent
		}
		return rs[a].Index < rs[b].Index
	})
}
