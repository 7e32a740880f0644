package attack

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ratecheck/ratecheck/headers"
)

// Clients is a population of closed-loop clients that each want Goal
// successes. Naive clients (storm) retry a rejection at once; Backoff ones
// wait a full-jitter exponential delay — random in [0, min(Cap, Base·2^n)] —
// or what Retry-After says when present, unless IgnoreRetryAfter.
type Clients struct {
	N                int
	Goal             int
	Backoff          bool
	Base, Cap        time.Duration
	IgnoreRetryAfter bool
	// Bin is the width of the attempt-rate series; default 100 ms.
	Bin time.Duration
	// KeyPerClient sends each client's number as its key (with --key-header).
	KeyPerClient bool
	// Shard, when set, runs this shard's share of the N clients (clients
	// K, K+N, …, numbered as in the whole run).
	Shard Shard
}

func (p Clients) Name() string {
	if p.Backoff {
		return "backoff"
	}
	return "storm"
}

// ClientsMetrics is storm's and backoff's JSON: the same fields, so the two
// runs can be put side by side.
type ClientsMetrics struct {
	Clients       int           `json:"clients"`
	Goal          int           `json:"goal"`
	Attempts      int           `json:"attempts"`
	Successes     int           `json:"successes"`
	Amplification float64       `json:"amplification"` // attempts ÷ successes
	Finished      int           `json:"finished"`      // clients that reached their goal
	FinishP50     time.Duration `json:"finish_p50_ns"`
	FinishP99     time.Duration `json:"finish_p99_ns"`
	Bin           time.Duration `json:"bin_ns"`
	AttemptRate   []float64     `json:"attempt_rate_per_s"` // per bin from the first send; the last over its actual width
	PeakRate      float64       `json:"peak_attempt_rate_per_s"`
	// MeanRate is every attempt over Elapsed, the time the clients really
	// ran (to the last one's finish, or to the cut when CutShort).
	MeanRate float64       `json:"mean_attempt_rate_per_s"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	CutShort bool          `json:"cut_short,omitempty"`
}

func (p Clients) Run(ctx context.Context, e *Engine, c *Collector) (Report, error) {
	if err := p.Validate(e.opt); err != nil {
		return Report{}, err
	}
	if p.Bin <= 0 {
		p.Bin = 100 * time.Millisecond
	}
	if p.Base <= 0 {
		p.Base = 100 * time.Millisecond
	}
	if p.Cap <= 0 {
		p.Cap = 10 * time.Second
	}
	start := e.Now()
	n := p.Shard.Share(p.N)
	finish := make([]time.Duration, n)
	var wg sync.WaitGroup
	for j := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			finish[j] = p.client(ctx, e, p.Shard.nth(j)+1) - start
		}()
	}
	wg.Wait()
	end := e.Now()
	cut := ctx.Err() != nil
	e.Wait()

	rs := c.Results()
	m := ClientsMetrics{Clients: n, Goal: p.Goal, Attempts: len(rs), Bin: p.Bin, Elapsed: end - start, CutShort: cut}
	if m.Elapsed > 0 {
		m.MeanRate = float64(m.Attempts) / m.Elapsed.Seconds()
	}
	var done []time.Duration
	for _, f := range finish {
		if f > 0 {
			done = append(done, f)
		}
	}
	m.Finished = len(done)
	sort.Slice(done, func(i, j int) bool { return done[i] < done[j] })
	m.FinishP50, m.FinishP99 = quantile(done, 0.5), quantile(done, 0.99)
	for _, r := range rs {
		if r.Admitted() {
			m.Successes++
		}
	}
	if m.Successes > 0 {
		m.Amplification = float64(m.Attempts) / float64(m.Successes)
	}
	var partial bool
	m.AttemptRate, partial = binRates(rs, p.Bin, end)
	m.PeakRate = peakRate(m.AttemptRate, partial)
	return m.report(p.Name(), c.Metrics.Summary()), nil
}

// peakRate is the highest bin's rate; a last, partial bin may hold too few
// attempts for a peak.
func peakRate(rates []float64, partial bool) float64 {
	peak := 0.0
	for i, v := range rates {
		if !partial || i < len(rates)-1 || len(rates) == 1 {
			peak = max(peak, v)
		}
	}
	return peak
}

// report is storm's or backoff's table and verdict for its metrics (shared
// by a merged sharded run).
func (m ClientsMetrics) report(name string, s Summary) Report {
	verdict := fmt.Sprintf("%d %s clients wanting %d each: %d attempts for %d successes — amplification %.1f×; %d/%d finished",
		m.Clients, name, m.Goal, m.Attempts, m.Successes, m.Amplification, m.Finished, m.Clients)
	if m.CutShort {
		verdict += fmt.Sprintf(" before the run was cut short at %.2f s", m.Elapsed.Seconds())
	}
	rows := [][]string{
		{"clients × goal", fmt.Sprintf("%d × %d", m.Clients, m.Goal)},
		{"attempts", fmt.Sprint(m.Attempts)},
		{"successes", fmt.Sprint(m.Successes)},
		{"amplification (attempts ÷ successes)", fmt.Sprintf("%.2f×", m.Amplification)},
		{"clients finished", fmt.Sprintf("%d of %d", m.Finished, m.Clients)},
		{"time to finish p50 / p99", fmt.Sprintf("%.2f s / %.2f s", m.FinishP50.Seconds(), m.FinishP99.Seconds())},
		{"attempt rate mean / peak", fmt.Sprintf("%.0f/s over %.2f s / %.0f/s", m.MeanRate, m.Elapsed.Seconds(), m.PeakRate)},
		{"attempt rate over time", sparkline(m.AttemptRate)},
	}
	return Report{Profile: name, Verdict: verdict, Rows: rows, Metrics: ProfileMetrics{Clients: &m}, Summary: s}
}

// client runs one simulated client and returns when it reached its goal
// (the offset then), or 0 if the run ended first.
func (p Clients) client(ctx context.Context, e *Engine, id int) time.Duration {
	key := ""
	if p.KeyPerClient {
		key = "client-" + strconv.Itoa(id)
	}
	rng := rand.New(rand.NewPCG(uint64(id), uint64(time.Now().UnixNano())))
	successes, failures := 0, 0
	for successes < p.Goal {
		r, ok := e.Do(ctx, Shot{Phase: p.Name(), Client: id, Key: key})
		if !ok {
			return 0
		}
		if r.Admitted() {
			successes++
			failures = 0
			continue
		}
		failures++
		if !p.Backoff {
			continue
		}
		wait := fullJitter(rng, p.Base, p.Cap, failures)
		if !p.IgnoreRetryAfter {
			if ra, ok := retryAfterDelay(r); ok {
				// Obey the server, plus a little jitter so the clients it
				// told the same instant do not come back in lockstep.
				wait = ra + time.Duration(rng.Int64N(int64(p.Base)+1))
			}
		}
		if !idle(ctx, e, wait) {
			return 0
		}
	}
	return e.Now()
}

// fullJitter is AWS's "full jitter": uniform in [0, min(cap, base·2^n)].
func fullJitter(rng *rand.Rand, base, cap time.Duration, n int) time.Duration {
	ceiling := cap
	if n < 40 {
		if d := base << uint(n-1); d > 0 && d < cap {
			ceiling = d
		}
	}
	return time.Duration(rng.Int64N(int64(ceiling) + 1))
}

// retryAfterDelay is how long a rejection's Retry-After asks to wait, read
// as leniently as a real client library would (headers' forgiving reader:
// fractional seconds, an RFC 1123 date in UTC); judging the header's form
// is the grader's job.
func retryAfterDelay(r *Result) (time.Duration, bool) {
	v, ok := r.Headers["retry-after"]
	if !ok || strings.TrimSpace(v) == "" {
		return 0, false
	}
	ra, _, ok := headers.ReadRetryAfterLeniently(v, time.Time{})
	switch {
	case !ok:
		return 0, false
	case ra.Form == headers.RetryAfterDate:
		return max(time.Until(ra.At), 0), true
	}
	return ra.Delay, true
}

// binRates counts sends per bin from the first send, as rates per second.
// The last bin ends at end (when the clients stopped), so its rate is over
// the part of it that was really spent; partial says it was narrower than
// bin.
func binRates(rs []*Result, bin, end time.Duration) (rates []float64, partial bool) {
	if len(rs) == 0 {
		return nil, false
	}
	first := rs[0].Sent
	n := int((rs[len(rs)-1].Sent-first)/bin) + 1
	out := make([]float64, n)
	for _, r := range rs {
		out[int((r.Sent-first)/bin)]++
	}
	for i := range out {
		width := bin
		if i == n-1 {
			// At least a millisecond: below that one attempt reads as a
			// rate nobody sent.
			width = min(bin, max(end-(first+time.Duration(i)*bin), time.Millisecond))
			partial = width < bin
		}
		out[i] /= width.Seconds()
	}
	return out, partial
}

// sparkline draws a series in eight levels for the terminal table.
func sparkline(v []float64) string {
	const levels = "▁▂▃▄▅▆▇█"
	peak := 0.0
	for _, x := range v {
		peak = max(peak, x)
	}
	if peak == 0 {
		return ""
	}
	runes := []rune(levels)
	var b strings.Builder
	step := max(1, len(v)/60) // at most ~60 columns
	for i := 0; i < len(v); i += step {
		x := 0.0
		for j := i; j < min(i+step, len(v)); j++ {
			x = max(x, v[j])
		}
		b.WriteRune(runes[min(len(runes)-1, int(x/peak*float64(len(runes)-1)+0.5))])
	}
	return b.String()
}
