package attack

import (
	"context"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ratecheck/ratecheck/headers"
	"github.com/ratecheck/ratecheck/results"
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
	Shard results.Shard
}

func (p Clients) Name() string {
	if p.Backoff {
		return "backoff"
	}
	return "storm"
}

func (p Clients) Run(ctx context.Context, e *Engine, c *Collector) (results.Report, error) {
	if err := p.Validate(e.opt); err != nil {
		return results.Report{}, err
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
			finish[j] = p.client(ctx, e, nth(p.Shard, j)+1) - start
		}()
	}
	wg.Wait()
	end := e.Now()
	cut := ctx.Err() != nil
	e.Wait()

	rs := c.Results()
	m := results.ClientsMetrics{Clients: n, Goal: p.Goal, Attempts: len(rs), Bin: p.Bin, Elapsed: end - start, CutShort: cut}
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
	m.FinishP50, m.FinishP99 = results.Quantile(done, 0.5), results.Quantile(done, 0.99)
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
	m.PeakRate = results.PeakRate(m.AttemptRate, partial)
	return m.Report(p.Name(), c.Metrics.Summary()), nil
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
func retryAfterDelay(r *results.Result) (time.Duration, bool) {
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
func binRates(rs []*results.Result, bin, end time.Duration) (rates []float64, partial bool) {
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
