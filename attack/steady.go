package attack

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"
)

// Steady sends at a constant rate for a duration (open model), or, with
// Rate 0, as fast as Conns closed-loop connections can (max throughput).
type Steady struct {
	Rate     float64 // requests per second; 0 = as fast as possible
	Duration time.Duration
	Conns    int // closed-loop connections when Rate is 0
	// Shard, when set, keeps every N-th send of the one schedule (sends
	// K-1, K-1+N, …), or its share of Conns closed-loop connections.
	Shard Shard
}

func (Steady) Name() string { return "steady" }

// SteadyMetrics is steady's JSON.
type SteadyMetrics struct {
	TargetRate   float64 `json:"target_rate_per_s"`
	AchievedRate float64 `json:"achieved_rate_per_s"`
	AdmittedRate float64 `json:"admitted_rate_per_s"` // over Span
	RejectedPct  float64 `json:"rejected_pct"`
	Imprecise    bool    `json:"imprecise"`
	// Span is the time the rates are over: the planned duration, or the
	// time actually spent sending when the run was cut short (CutShort).
	Span     time.Duration `json:"span_ns"`
	CutShort bool          `json:"cut_short,omitempty"`
	// Planned is the duration the plan asked for.
	Planned time.Duration `json:"planned_ns,omitempty"`
	// Unmeasured says why the rates are not measured (then they are 0):
	// a rate needs at least two sends, and a budget of one request, or a
	// run stopped after its first send, has one.
	Unmeasured string `json:"rates_unmeasured,omitempty"`
}

// conclude fills the rates from the run's summary: the sent rate over the
// sends' own span, the admitted rate over Span.
func (m *SteadyMetrics) conclude(s Summary, paced bool) {
	if s.Requests < 2 {
		m.Unmeasured = fmt.Sprintf("%d sent: a rate needs at least 2 requests", s.Requests)
		if s.Requests > 0 {
			m.RejectedPct = 100 * float64(s.Rejected) / float64(s.Requests)
		}
		return
	}
	m.AchievedRate, m.Imprecise = s.SentRate, paced && s.Imprecise()
	if m.Span > 0 {
		m.AdmittedRate = float64(s.Admitted) / m.Span.Seconds()
	}
	m.RejectedPct = 100 * float64(s.Rejected) / float64(s.Requests)
}

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

func (p Steady) Run(ctx context.Context, e *Engine, c *Collector) (Report, error) {
	if err := p.Validate(e.opt); err != nil {
		return Report{}, err
	}
	begin := e.Now()
	if p.Rate > 0 {
		n := int(math.Round(p.Rate * p.Duration.Seconds()))
		interval := 1 / p.Rate
		e.Schedule(ctx, p.Shard.ownedOf(n), func(j int) Shot {
			i := p.Shard.nth(j) // the send's place in the whole run's schedule
			return Shot{At: time.Duration(float64(i) * interval * float64(time.Second)), Phase: "steady"}
		})
	} else {
		conns := max(p.Shard.Share(p.Conns), 1)
		end := time.Now().Add(p.Duration)
		var wg sync.WaitGroup
		for range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(end) {
					if _, ok := e.Do(ctx, Shot{Phase: "steady"}); !ok {
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	// Sending stops at the plan's end, or when the run is cut short (a
	// budget, Ctrl-C): then the rates are over the time really spent.
	// A shard's target is its part of the whole rate.
	m := SteadyMetrics{TargetRate: p.Rate / float64(max(p.Shard.N, 1)), Span: p.Duration, Planned: p.Duration}
	if ctx.Err() != nil || p.Rate == 0 {
		m.Span = min(p.Duration, e.Now()-begin)
		m.CutShort = ctx.Err() != nil
	}
	e.Wait()
	s := c.Metrics.Summary()
	m.conclude(s, p.Rate > 0)
	return m.report(p.Duration, s), nil
}

// report is steady's table and verdict for its metrics and summary over a
// plan of planned (shared by a merged sharded run).
func (m SteadyMetrics) report(planned time.Duration, s Summary) Report {
	verdict := fmt.Sprintf("sent %.1f/s, admitted %.1f/s, rejected %.1f%%", m.AchievedRate, m.AdmittedRate, m.RejectedPct)
	achieved, admitted := fmt.Sprintf("%.1f/s", m.AchievedRate), fmt.Sprintf("%.1f/s over %.2f s", m.AdmittedRate, m.Span.Seconds())
	if m.Unmeasured != "" {
		verdict = fmt.Sprintf("rates not measured (%s), admitted %d, rejected %d", m.Unmeasured, s.Admitted, s.Rejected)
		achieved, admitted = "not measured", "not measured"
	}
	if m.CutShort {
		verdict += fmt.Sprintf("; cut short after %.2f s of %s planned", m.Span.Seconds(), planned)
		if m.Unmeasured == "" {
			verdict += ": rates over the time spent"
		}
	}
	if m.Imprecise {
		verdict += fmt.Sprintf(" — imprecise: sends were up to %s late (p99)", ms(s.Lateness.P99))
	}
	rows := [][]string{
		{"target rate", rateOrMax(m.TargetRate)},
		{"achieved rate", achieved},
		{"admitted rate", admitted},
		{"rejected", fmt.Sprintf("%d (%.1f%%)", s.Rejected, m.RejectedPct)},
		{"errors", fmt.Sprint(s.Errors)},
		{"latency p50 / p99", ms(s.Latency.P50) + " / " + ms(s.Latency.P99)},
		{"pacing error p50 / p99", ms(s.Lateness.P50) + " / " + ms(s.Lateness.P99)},
	}
	rows = append(rows, statusRows(s.Statuses)...)
	return Report{Profile: "steady", Verdict: verdict, Rows: rows, Metrics: ProfileMetrics{Steady: &m}, Summary: s}
}

func rateOrMax(r float64) string {
	if r <= 0 {
		return "max (closed loop)"
	}
	return fmt.Sprintf("%g/s", r)
}
