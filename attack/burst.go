package attack

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// Burst idles, then releases K requests at one instant, then optionally
// traces recovery at TailRate for Tail.
type Burst struct {
	K        int
	Idle     time.Duration
	Tail     time.Duration
	TailRate float64
	// Shard, when set, releases this shard's share of K (the shares differ
	// by at most one) at the same instant, and keeps every N-th send of the
	// tail.
	Shard results.Shard
}

func (Burst) Name() string { return "burst" }

func (p Burst) Run(ctx context.Context, e *Engine, c *Collector) (results.Report, error) {
	if err := p.Validate(e.opt); err != nil {
		return results.Report{}, err
	}
	// The instant is an offset from the run's start, which all the shards
	// of a run share (RunOptions.StartAt).
	at := p.Idle
	shots := make([]Shot, p.Shard.Share(p.K))
	for i := range shots {
		shots[i] = Shot{Phase: "burst"}
	}
	e.Burst(ctx, at, shots)
	realtime, armedLate := e.RealtimeRelease(), e.ArmedLate()
	tailSpan, tailCut := p.Tail, false
	if p.Tail > 0 && p.TailRate > 0 && ctx.Err() == nil {
		e.Wait() // the tail starts after the burst has its answers
		start := e.Now()
		n := int(math.Round(p.TailRate * p.Tail.Seconds()))
		e.Schedule(ctx, ownedOf(p.Shard, n), func(j int) Shot {
			i := nth(p.Shard, j)
			return Shot{At: start + time.Duration(float64(i)/p.TailRate*float64(time.Second)), Phase: "tail"}
		})
		if ctx.Err() != nil { // cut short: the rate is over the time spent
			tailSpan, tailCut = min(p.Tail, e.Now()-start), true
		}
	}
	e.Wait()
	burst := c.Phase("burst")
	if late := results.FirstSent(burst) - at; !p.Shard.Whole() && len(burst) > 0 && armedLate > 0 {
		// The shards meet only at the planned instant: one that opened its
		// connections after it released on its own. Judged by when the
		// connections were armed, not by the first send: a timer woken a
		// millisecond late on a loaded machine is not a shard out of step.
		e.note(fmt.Sprintf("this shard released its burst %s after the common instant (start + %s): its connections were not ready in time; give %s more time",
			ms(late), p.Idle, e.opt.name("Burst.Idle")))
	}
	m := results.BurstPhase(burst)
	m.RealtimeRelease, m.Idle, m.TailPlanned = realtime, p.Idle, p.Tail
	m.TailPlannedRate = p.TailRate / float64(max(p.Shard.N, 1))
	if tail := c.Phase("tail"); len(tail) > 0 {
		tt := results.Tally(tail)
		m.TailSent, m.TailAdmitted, m.TailSpan, m.TailCutShort = tt.Total, tt.Admitted, tailSpan, tailCut
		if tailSpan > 0 {
			m.TailRate = float64(tt.Admitted) / tailSpan.Seconds()
		}
	}
	return m.Report(c.Metrics.Summary()), nil
}
