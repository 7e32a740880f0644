package results

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

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

// Report is burst's table and verdict for its metrics (shared by a merged
// sharded run).
func (m BurstMetrics) Report(s Summary) Report {
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

// BurstPhase is what the burst's own requests show: the counts, the send
// spread, the added latencies and how many of them count as delayed.
func BurstPhase(burst []*Result) BurstMetrics { return burstPhaseOf([][]*Result{burst}) }

// burstPhaseOf is BurstPhase over the bursts of several shards released at
// one instant: counted and spread together, but each shard's added
// latency is over its own fastest answer and its own noise, since the
// shards' round trips differ (other hosts, other networks).
func burstPhaseOf(shards [][]*Result) BurstMetrics {
	burst := slices.Concat(shards...)
	t := Tally(burst)
	m := BurstMetrics{Size: len(burst), Admitted: t.Admitted, Rejected: t.Rejected, Errors: t.Errors, Other: t.Other,
		Statuses: statusCounts(burst), SendSpread: Spread(burst)}
	var added []time.Duration
	for _, rs := range shards {
		added = append(added, AddedLatencies(rs)...)
		m.DelayThreshold = max(m.DelayThreshold, delayThreshold(rs))
	}
	slices.Sort(added)
	for _, a := range added {
		if a > m.DelayThreshold {
			m.Delayed++
		}
	}
	if len(added) > 0 {
		m.AddedP50, m.AddedP99, m.AddedMax = Quantile(added, 0.5), Quantile(added, 0.99), added[len(added)-1]
	}
	return m
}

func releasePriority(realtime bool) string {
	if realtime {
		return ", real-time priority"
	}
	return ", normal priority"
}

// AddedLatencies are the admitted requests' latencies above the fastest
// admitted one (the unqueued service time), sorted.
func AddedLatencies(rs []*Result) []time.Duration {
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
