package attack

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"
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
	Shard Shard
}

func (Burst) Name() string { return "burst" }

// minDelayThreshold is the least added latency that counts an admitted
// request as delayed (queued by a shaping limiter): above loopback RTT and
// timer slack, below any real queue step.
const minDelayThreshold = 5 * time.Millisecond

// delayThreshold adapts that floor to the run's own noise: rejections are
// answered without queueing, so the slowest of them shows how much latency
// the machine and network add by themselves in this burst.
func delayThreshold(rs []*Result) time.Duration {
	base, noisiest := time.Duration(-1), time.Duration(0)
	for _, r := range rs {
		if r.Error != "" {
			continue
		}
		if base < 0 || r.Latency() < base {
			base = r.Latency()
		}
		if r.Rejected() {
			noisiest = max(noisiest, r.Latency())
		}
	}
	if base < 0 || noisiest == 0 {
		return minDelayThreshold
	}
	return max(minDelayThreshold, noisiest-base+time.Millisecond)
}

// BurstMetrics is burst's JSON.
type BurstMetrics struct {
	Size     int `json:"size"`
	Admitted int `json:"admitted"`
	Delayed  int `json:"delayed"`
	Rejected int `json:"rejected"`
	Errors   int `json:"errors"`
	// Other counts the answers neither admitted (2xx) nor rejected
	// (429/503/403), e.g. 404 or 500; Statuses has every status the
	// burst's answers carried.
	Other      int           `json:"other"`
	Statuses   map[int]int   `json:"statuses,omitempty"`
	SendSpread time.Duration `json:"send_spread_ns"`
	// RealtimeRelease: the burst's writes ran at real-time priority, so a
	// target on the same machine could not preempt them (needs root or
	// CAP_SYS_NICE; see attack/release.go).
	RealtimeRelease bool `json:"realtime_release"`
	// DelayThreshold is the added latency above which an admitted request
	// counted as delayed in this run.
	DelayThreshold time.Duration `json:"delay_threshold_ns"`
	AddedP50       time.Duration `json:"added_latency_p50_ns"`
	AddedP99       time.Duration `json:"added_latency_p99_ns"`
	AddedMax       time.Duration `json:"added_latency_max_ns"`
	TailSent       int           `json:"tail_sent,omitempty"`
	TailAdmitted   int           `json:"tail_admitted,omitempty"`
	TailRate       float64       `json:"tail_admitted_rate_per_s,omitempty"` // over TailSpan
	// TailSpan is the time the tail's rate is over: the planned Tail, or
	// the time actually spent when the run was cut short (TailCutShort).
	TailSpan     time.Duration `json:"tail_span_ns,omitempty"`
	TailCutShort bool          `json:"tail_cut_short,omitempty"`
	// The plan: the idle before the burst, the tail's length and its rate
	// (a shard's part of it).
	Idle            time.Duration `json:"idle_ns"`
	TailPlanned     time.Duration `json:"tail_planned_ns,omitempty"`
	TailPlannedRate float64       `json:"tail_planned_rate_per_s,omitempty"`
}

func (p Burst) Run(ctx context.Context, e *Engine, c *Collector) (Report, error) {
	if err := p.Validate(e.opt); err != nil {
		return Report{}, err
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
		e.Schedule(ctx, p.Shard.ownedOf(n), func(j int) Shot {
			i := p.Shard.nth(j)
			return Shot{At: start + time.Duration(float64(i)/p.TailRate*float64(time.Second)), Phase: "tail"}
		})
		if ctx.Err() != nil { // cut short: the rate is over the time spent
			tailSpan, tailCut = min(p.Tail, e.Now()-start), true
		}
	}
	e.Wait()
	burst := c.Phase("burst")
	if late := firstSent(burst) - at; !p.Shard.Whole() && len(burst) > 0 && armedLate > 0 {
		// The shards meet only at the planned instant: one that opened its
		// connections after it released on its own. Judged by when the
		// connections were armed, not by the first send: a timer woken a
		// millisecond late on a loaded machine is not a shard out of step.
		e.note(fmt.Sprintf("this shard released its burst %s after the common instant (start + %s): its connections were not ready in time; give %s more time",
			ms(late), p.Idle, e.opt.name("Burst.Idle")))
	}
	m := burstPhase(burst)
	m.RealtimeRelease, m.Idle, m.TailPlanned = realtime, p.Idle, p.Tail
	m.TailPlannedRate = p.TailRate / float64(max(p.Shard.N, 1))
	if tail := c.Phase("tail"); len(tail) > 0 {
		tt := tally(tail)
		m.TailSent, m.TailAdmitted, m.TailSpan, m.TailCutShort = tt.Total, tt.Admitted, tailSpan, tailCut
		if tailSpan > 0 {
			m.TailRate = float64(tt.Admitted) / tailSpan.Seconds()
		}
	}
	return m.report(c.Metrics.Summary()), nil
}

// report is burst's table and verdict for its metrics (shared by a merged
// sharded run).
func (m BurstMetrics) report(s Summary) Report {
	verdict := fmt.Sprintf("burst of %d after %s idle: %d admitted (%d delayed), %d rejected; released within %s",
		m.Size, m.Idle, m.Admitted, m.Delayed, m.Rejected, ms(m.SendSpread))
	rows := [][]string{
		{"burst size", fmt.Sprint(m.Size)},
		{"admitted", fmt.Sprint(m.Admitted)},
		{fmt.Sprintf("  of which delayed (> %s added)", ms(m.DelayThreshold)), fmt.Sprint(m.Delayed)},
		{"rejected", fmt.Sprint(m.Rejected)},
	}
	if m.Other > 0 {
		rows = append(rows, []string{"other answers (neither 2xx nor 429/503/403)", fmt.Sprint(m.Other)})
	}
	rows = append(rows, statusRows(m.Statuses)...)
	rows = append(rows, [][]string{
		{"errors", fmt.Sprint(m.Errors)},
		{"added latency p50 / p99 / max", ms(m.AddedP50) + " / " + ms(m.AddedP99) + " / " + ms(m.AddedMax)},
		{"send spread (first to last)", ms(m.SendSpread) + releasePriority(m.RealtimeRelease)},
	}...)
	if m.TailSent > 0 {
		over := fmt.Sprint(m.TailPlanned)
		if m.TailCutShort {
			over = fmt.Sprintf("the %.2f s spent before the run was cut short (of %s planned)", m.TailSpan.Seconds(), m.TailPlanned)
		}
		rows = append(rows, []string{"recovery: admitted rate", fmt.Sprintf("%.1f/s of %g/s sent over %s", m.TailRate, m.TailPlannedRate, over)})
	}
	return Report{Profile: "burst", Verdict: verdict, Rows: rows, Metrics: ProfileMetrics{Burst: &m}, Summary: s}
}

// burstPhase is what the burst's own requests show: the counts, the send
// spread, the added latencies and how many of them count as delayed.
func burstPhase(burst []*Result) BurstMetrics { return burstPhaseOf([][]*Result{burst}) }

// burstPhaseOf is burstPhase over the bursts of several shards released at
// one instant: counted and spread together, but each shard's added
// latency is over its own fastest answer and its own noise, since the
// shards' round trips differ (other hosts, other networks).
func burstPhaseOf(shards [][]*Result) BurstMetrics {
	burst := slices.Concat(shards...)
	t := tally(burst)
	m := BurstMetrics{Size: len(burst), Admitted: t.Admitted, Rejected: t.Rejected, Errors: t.Errors, Other: t.Other,
		Statuses: statusCounts(burst), SendSpread: spread(burst)}
	var added []time.Duration
	for _, rs := range shards {
		added = append(added, addedLatencies(rs)...)
		m.DelayThreshold = max(m.DelayThreshold, delayThreshold(rs))
	}
	slices.Sort(added)
	for _, a := range added {
		if a > m.DelayThreshold {
			m.Delayed++
		}
	}
	if len(added) > 0 {
		m.AddedP50, m.AddedP99, m.AddedMax = quantile(added, 0.5), quantile(added, 0.99), added[len(added)-1]
	}
	return m
}

func releasePriority(realtime bool) string {
	if realtime {
		return ", real-time priority"
	}
	return ", normal priority"
}

// addedLatencies are the admitted requests' latencies above the fastest
// admitted one (the unqueued service time), sorted.
func addedLatencies(rs []*Result) []time.Duration {
	var lat []time.Duration
	for _, r := range rs {
		if r.Admitted() && r.Error == "" {
			lat = append(lat, r.Latency())
		}
	}
	if len(lat) == 0 {
		return nil
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	base := lat[0]
	for i := range lat {
		lat[i] -= base
	}
	return lat
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
