package attack

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/ratecheck/ratecheck/headers"
	"github.com/ratecheck/ratecheck/results"
)

// Boundary is the fixed-window straddle: find a window boundary, fire L
// requests just before it and L just after, and count what got through.
// A fixed window admits ~2L; sliding windows and buckets admit ~L.
type Boundary struct {
	Limit  int           // L; 0 = learn it from headers or by probing
	Window time.Duration // W; 0 = learn it from headers or by probing
	Gap    time.Duration // poll interval when locating the boundary; 0 = W/200 within [2 ms, 250 ms]
	// Shard, when set, sends this shard's share of each volley (and of each
	// exhausting burst). It needs Limit and Window: a shard cannot learn L
	// alone while the others spend the same quota.
	Shard results.Shard
}

func (Boundary) Name() string { return "boundary" }

const (
	maxExhaustRounds = 20
	maxStraddles     = 4
)

func (p Boundary) Run(ctx context.Context, e *Engine, c *Collector) (results.Report, error) {
	if err := p.Validate(e.opt); err != nil {
		return results.Report{}, err
	}
	m := results.BoundaryMetrics{Limit: p.Limit, Window: p.Window, LearnedFrom: "flags"}
	calibrated := 0 // the calibration request's admission counts toward L
	fail := func(format string, a ...any) (results.Report, error) {
		return results.Report{}, fmt.Errorf(format, a...)
	}
	if m.Limit == 0 || m.Window == 0 {
		r, ok := e.Do(ctx, Shot{Phase: "calibrate"})
		if !ok {
			return fail("the run ended before calibration")
		}
		if r.Error != "" {
			return fail("calibration request failed: %s", r.Error)
		}
		if r.Admitted() {
			calibrated = 1
		}
		l, w := QuotaHints(r.Headers)
		if m.Limit == 0 && l > 0 {
			m.Limit, m.LearnedFrom = l, "headers"
		}
		if m.Window == 0 && w > 0 {
			m.Window, m.LearnedFrom = w, "headers"
		}
	}
	// Exhaust the quota, then find the instant it comes back.
	admitted, ok := p.exhaust(ctx, e, c, m.Limit, "exhaust")
	if !ok {
		return fail("the target never rejected a request in %d rounds: no limit to straddle", maxExhaustRounds)
	}
	gap := p.gapFor(m.Window)
	lo, hi, ok := p.pollRefill(ctx, e, gap, m.Window)
	if !ok {
		return fail("capacity did not come back while polling every %s: is the window longer than the time budget (%s)?", gap, e.opt.name("Options.MaxDuration"))
	}
	// The window that just opened at the refill holds only the admitted
	// poll; the first clean straddle is at the boundary after it.
	k := 1
	if m.Limit == 0 || m.Window == 0 {
		// Measure L in the fresh window right after the refill: no
		// boundary can fall inside this burst.
		size := m.Limit + 1
		if m.Limit == 0 {
			size = 2*(admitted+calibrated) + 10
		}
		got, ok := p.exhaust(ctx, e, c, size-1, "measure")
		if !ok {
			return fail("the target stopped rejecting after its first refill")
		}
		if m.Limit == 0 {
			m.Limit, m.LearnedFrom = got+1, "probing"
		}
		k = 2 // the measured window is spent: straddle the one after
		if m.Window == 0 {
			lo2, hi2, ok := p.pollRefill(ctx, e, gap, 0)
			if !ok {
				return fail("no second refill seen")
			}
			m.Window, m.LearnedFrom = (lo2+hi2)/2-(lo+hi)/2, "probing"
			m.WindowUncertainty = ((hi - lo) + (hi2 - lo2)) / 2
			lo, hi, k = lo2, hi2, 1
		}
	}
	// The refill lies in [lo, hi], so boundary k lies in [lo+kW, hi+kW].
	// Volley 1 counts only if all its answers came back before lo+kW (the
	// server decided before the boundary), volley 2 only if it was sent
	// after hi+kW. A stall on a loaded machine can break either; then the
	// straddle is void and is tried again two windows later, when the
	// window before the boundary is clean again.
	// The margin covers a round trip and a scheduling hiccup; a fortieth of
	// the window keeps the straddle tight relative to W.
	if err := straddleFits(e.opt, m.Limit); err != nil {
		return results.Report{}, fmt.Errorf("learned a limit of %d from %s: %w", m.Limit, m.LearnedFrom, err)
	}
	margin := max(10*time.Millisecond, 2*p.rtt(c), m.Window/40)
	m.Uncertainty = hi - lo
	var b, a []*results.Result
	for attempt := 0; attempt < maxStraddles; attempt++ {
		// A probed W carries its error k times.
		edgeLo := lo + time.Duration(k)*(m.Window-m.WindowUncertainty)
		edgeHi := hi + time.Duration(k)*(m.Window+m.WindowUncertainty)
		m.BoundaryAt = edgeHi
		before, after := make([]Shot, m.Limit), make([]Shot, m.Limit)
		bp, ap := fmt.Sprintf("before-%d", attempt), fmt.Sprintf("after-%d", attempt)
		for i := range before {
			before[i], after[i] = Shot{Phase: bp}, Shot{Phase: ap}
		}
		if !p.Shard.Whole() {
			share := p.Shard.Share(m.Limit)
			before, after = before[:share], after[:share]
		}
		e.Burst(ctx, edgeLo-margin, before)
		e.Burst(ctx, edgeHi+margin, after)
		e.Wait()
		if ctx.Err() != nil {
			return fail("the run ended during the straddle: %w", context.Cause(ctx))
		}
		b, a = c.Phase(bp), c.Phase(ap)
		if lastAnswer(b) < edgeLo && results.FirstSent(a) > edgeHi {
			break
		}
		e.note(fmt.Sprintf("straddle attempt %d void: a volley was sent on the wrong side of the boundary (the machine stalled); retried", attempt+1))
		b, a = nil, nil
		k += 2
	}
	if b == nil {
		return fail("could not land the volleys on both sides of a boundary in %d attempts: the machine is too loaded for this window (try a longer one)", maxStraddles)
	}
	m.Before, m.After = results.Tally(b).Admitted, results.Tally(a).Admitted
	m.Admitted = m.Before + m.After
	m.Span = results.Spread(append(b, a...))
	m.Ratio = float64(m.Admitted) / float64(m.Limit)
	if !p.Shard.Whole() {
		m.Share = p.Shard.Share(m.Limit)
		m.Ratio = float64(m.Admitted) / float64(m.Share)
	}
	m.Leaks = m.Ratio >= 1.5
	m.VolleyBefore, m.VolleyAfter = len(b), len(a)
	return m.Report(len(b), len(a), c.Metrics.Summary()), nil
}

func (p Boundary) gapFor(w time.Duration) time.Duration {
	if p.Gap > 0 {
		return p.Gap
	}
	if w == 0 {
		return 10 * time.Millisecond
	}
	return min(max(w/200, 2*time.Millisecond), 250*time.Millisecond)
}

// rtt is the median latency of the polls so far: the margin a volley needs
// to reach the server on the intended side of a boundary.
func (p Boundary) rtt(c *Collector) time.Duration {
	var lat []time.Duration
	for _, r := range c.Phase("poll") {
		lat = append(lat, r.Latency())
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return results.Quantile(lat, 0.5)
}

// lastAnswer is when the last response of rs arrived (its first byte, or
// its end for one that failed without any).
func lastAnswer(rs []*results.Result) time.Duration {
	var t time.Duration
	for _, r := range rs {
		if r.FirstByte > 0 {
			t = max(t, r.FirstByte)
		} else {
			t = max(t, r.Done)
		}
	}
	return t
}

// exhaust fires bursts until one sees a rejection and returns how many were
// admitted in all.
func (p Boundary) exhaust(ctx context.Context, e *Engine, c *Collector, limit int, phase string) (int, bool) {
	size := 50
	if limit > 0 {
		size = limit + 1
	}
	size = max(p.Shard.Share(size), 1)
	admitted := 0
	for round := range maxExhaustRounds {
		name := fmt.Sprintf("%s-%d", phase, round)
		shots := make([]Shot, size)
		for i := range shots {
			shots[i] = Shot{Phase: name}
		}
		e.Burst(ctx, e.Now(), shots)
		e.Wait()
		t := results.Tally(c.Phase(name))
		admitted += t.Admitted
		if t.Rejected > 0 {
			return admitted, true
		}
		if ctx.Err() != nil || t.Errors == t.Total {
			return admitted, false
		}
	}
	return admitted, false
}

// pollRefill sends one request every gap until one is admitted and returns
// a bracket of the refill instant: after the last rejected poll was sent,
// before the admitted one's answer arrived.
func (p Boundary) pollRefill(ctx context.Context, e *Engine, gap, window time.Duration) (lo, hi time.Duration, ok bool) {
	limit := 10000
	if window > 0 {
		limit = int(2*window/gap) + 10
	}
	lo = e.Now()
	for range limit {
		r, ok := e.Do(ctx, Shot{Phase: "poll"})
		if !ok {
			return 0, 0, false
		}
		if r.Admitted() {
			// The server decided somewhere between sending and the
			// first byte back: the latter bounds the refill from above.
			return lo, r.FirstByte, true
		}
		lo = r.Sent
		if !idle(ctx, e, gap) {
			return 0, 0, false
		}
	}
	return 0, 0, false
}

// QuotaHints reads L and W from rate-limit headers when a server states
// them: hints for an experiment's sizes, never conclusions. A RateLimit
// policy with a quota and a window (any draft: headers.ParseIETF) gives
// both; a bare limit field gives L alone.
func QuotaHints(h map[string]string) (limit int, window time.Duration) {
	hdr := http.Header{}
	for k, v := range h {
		hdr.Set(k, v)
	}
	if ietf, _ := headers.ParseIETF(hdr); ietf.Present {
		for _, p := range ietf.Policies {
			if p.HasQuota && p.HasWindow && p.Quota > 0 && p.Quota <= math.MaxInt32 {
				return int(p.Quota), time.Duration(p.WindowSeconds) * time.Second
			}
		}
	}
	for _, name := range []string{"x-ratelimit-limit", "ratelimit-limit", "x-rate-limit-limit"} {
		if v, err := strconv.Atoi(h[name]); err == nil && v > 0 {
			return v, 0
		}
	}
	return 0, 0
}
