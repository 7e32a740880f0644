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
}

func (Steady) Name() string { return "steady" }

// SteadyMetrics is steady's JSON.
type SteadyMetrics struct {
	TargetRate   float64 `json:"target_rate_per_s"`
	AchievedRate float64 `json:"achieved_rate_per_s"`
	AdmittedRate float64 `json:"admitted_rate_per_s"`
	RejectedPct  float64 `json:"rejected_pct"`
	Imprecise    bool    `json:"imprecise"`
}

func (p Steady) Run(ctx context.Context, e *Engine, c *Collector) (Report, error) {
	if p.Duration <= 0 {
		return Report{}, fmt.Errorf("steady needs a positive --duration")
	}
	if p.Rate > 0 {
		n := int(math.Round(p.Rate * p.Duration.Seconds()))
		interval := 1 / p.Rate
		e.Schedule(ctx, n, func(i int) Shot {
			return Shot{At: time.Duration(float64(i) * interval * float64(time.Second)), Phase: "steady"}
		})
	} else {
		conns := max(p.Conns, 1)
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
	e.Wait()
	s := c.Metrics.Summary()
	m := SteadyMetrics{TargetRate: p.Rate, AchievedRate: s.SentRate, Imprecise: p.Rate > 0 && s.Imprecise()}
	span := p.Duration.Seconds()
	if s.Requests > 0 {
		m.AdmittedRate = float64(s.Admitted) / span
		m.RejectedPct = 100 * float64(s.Rejected) / float64(s.Requests)
	}
	verdict := fmt.Sprintf("sent %.1f/s, admitted %.1f/s, rejected %.1f%%", m.AchievedRate, m.AdmittedRate, m.RejectedPct)
	if m.Imprecise {
		verdict += fmt.Sprintf(" — imprecise: sends were up to %s late (p99)", ms(s.Lateness.P99))
	}
	rows := [][]string{
		{"target rate", rateOrMax(p.Rate)},
		{"achieved rate", fmt.Sprintf("%.1f/s", m.AchievedRate)},
		{"admitted rate", fmt.Sprintf("%.1f/s", m.AdmittedRate)},
		{"rejected", fmt.Sprintf("%d (%.1f%%)", s.Rejected, m.RejectedPct)},
		{"errors", fmt.Sprint(s.Errors)},
		{"latency p50 / p99", ms(s.Latency.P50) + " / " + ms(s.Latency.P99)},
		{"pacing error p50 / p99", ms(s.Lateness.P50) + " / " + ms(s.Lateness.P99)},
	}
	return Report{Profile: "steady", Verdict: verdict, Rows: rows, Metrics: m, Summary: s}, nil
}

func rateOrMax(r float64) string {
	if r <= 0 {
		return "max (closed loop)"
	}
	return fmt.Sprintf("%g/s", r)
}
