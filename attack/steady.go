package attack

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// Steady sends at a constant rate for a duration (open model), or, with
// Rate 0, as fast as Conns closed-loop connections can (max throughput).
type Steady struct {
	Rate     float64 // requests per second; 0 = as fast as possible
	Duration time.Duration
	Conns    int // closed-loop connections when Rate is 0
	// Shard, when set, keeps every N-th send of the one schedule (sends
	// K-1, K-1+N, …), or its share of Conns closed-loop connections.
	Shard results.Shard
}

func (Steady) Name() string { return "steady" }

// WarmConns is enough connections for a millisecond of sends, plus one:
// the first shots and a short stall find them open (a paced run opens more
// as it needs them), and all of them for a closed loop.
func (p Steady) WarmConns(opt Options) int {
	if p.Rate <= 0 {
		return max(p.Shard.Share(p.Conns), 1)
	}
	perShard := p.Rate / float64(max(p.Shard.N, 1))
	return min(int(math.Ceil(perShard/1000))+1, maxWarmConns)
}

// maxWarmConns bounds a paced run's warm-up: at 25,000/s a millisecond is 25
// sends, and more than that is better opened on demand than all at once.
const maxWarmConns = 32

// sends is how many requests the whole paced plan sends (every shard's):
// rate × duration.
func (p Steady) sends() int { return int(math.Round(p.Rate * p.Duration.Seconds())) }

func (p Steady) Run(ctx context.Context, e *Engine, c *Collector) (results.Report, error) {
	if err := p.Validate(e.opt); err != nil {
		return results.Report{}, err
	}
	begin := e.Now()
	if p.Rate > 0 {
		interval := 1 / p.Rate
		e.Schedule(ctx, ownedOf(p.Shard, p.sends()), func(j int) Shot {
			i := nth(p.Shard, j) // the send's place in the whole run's schedule
			return Shot{At: time.Duration(float64(i) * interval * float64(time.Second)), Phase: "steady"}
		})
	} else {
		conns := max(p.Shard.Share(p.Conns), 1)
		end := e.Now() + p.Duration
		var wg sync.WaitGroup
		for range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if e.Now() >= end {
					return
				}
				// Each request's end is the instant the next would start:
				// no clock reading of its own per request.
				e.loop(ctx, Shot{Phase: "steady"}, func(r *results.Result) bool { return r.Done < end })
			}()
		}
		wg.Wait()
	}
	// Sending stops at the plan's end, or when the run is cut short (a
	// budget, Ctrl-C): then the rates are over the time really spent.
	// A shard's target is its part of the whole rate.
	m := results.SteadyMetrics{TargetRate: p.Rate / float64(max(p.Shard.N, 1)), Span: p.Duration, Planned: p.Duration}
	if ctx.Err() != nil || p.Rate == 0 {
		m.Span = min(p.Duration, e.Now()-begin)
		m.CutShort = ctx.Err() != nil
	}
	e.Wait()
	s := c.Metrics.Summary()
	m.Conclude(s, p.Rate > 0)
	return m.Report(p.Duration, s), nil
}
