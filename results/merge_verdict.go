package results

import (
	"fmt"
	"slices"
	"time"
)

// The merged run's verdict: each profile's conclusion over all the shards,
// drawn with the same table and verdict as one process's run.

// report concludes over every shard as the profile does over one run.
func (g *merger) report(s Summary) Report {
	outcome := func(i int) ProfileMetrics { return g.shards[i].end.Outcome.Metrics }
	n := len(g.shards)
	switch g.profile {
	case "steady":
		var m SteadyMetrics
		for i := range n {
			o := outcome(i).Steady
			if o == nil {
				continue
			}
			m.TargetRate += o.TargetRate
			m.Span, m.Planned = max(m.Span, o.Span), max(m.Planned, o.Planned)
			m.CutShort = m.CutShort || o.CutShort
		}
		m.Conclude(s, m.TargetRate > 0)
		return m.Report(m.Planned, s)
	case "burst":
		m := burstPhaseOf(g.burst)
		m.RealtimeRelease = true
		for i := range n {
			o := outcome(i).Burst
			if o == nil {
				continue
			}
			m.RealtimeRelease = m.RealtimeRelease && o.RealtimeRelease
			m.Idle, m.TailPlanned = o.Idle, o.TailPlanned
			m.TailPlannedRate += o.TailPlannedRate
			m.TailSpan = max(m.TailSpan, o.TailSpan)
			m.TailCutShort = m.TailCutShort || o.TailCutShort
		}
		m.TailSent, m.TailAdmitted = g.tail.Total, g.tail.Admitted
		if m.TailSpan > 0 {
			m.TailRate = float64(m.TailAdmitted) / m.TailSpan.Seconds()
		}
		return m.Report(s)
	case "storm", "backoff":
		m := ClientsMetrics{Attempts: s.Requests, Successes: s.Admitted, Bin: clientsBin}
		for i := range n {
			o := outcome(i).Clients
			if o == nil {
				continue
			}
			m.Clients += o.Clients
			m.Goal = o.Goal
			m.Elapsed = max(m.Elapsed, o.Elapsed)
			m.CutShort = m.CutShort || o.CutShort
		}
		var done []time.Duration
		for _, ds := range g.clientDone {
			if m.Goal > 0 && len(ds) >= m.Goal {
				slices.Sort(ds)
				done = append(done, ds[m.Goal-1])
			}
		}
		slices.Sort(done)
		m.Finished = len(done)
		m.FinishP50, m.FinishP99 = Quantile(done, 0.5), Quantile(done, 0.99)
		if m.Successes > 0 {
			m.Amplification = float64(m.Attempts) / float64(m.Successes)
		}
		if m.Elapsed > 0 {
			m.MeanRate = float64(m.Attempts) / m.Elapsed.Seconds()
		}
		var partial bool
		m.AttemptRate, partial = fixedBinRates(g.bins, clientsBin, m.Elapsed)
		m.PeakRate = PeakRate(m.AttemptRate, partial)
		return m.Report(g.profile, s)
	case "boundary":
		var m BoundaryMetrics
		for i := range n {
			o := outcome(i).Boundary
			if o == nil {
				continue
			}
			m.Limit, m.Window, m.LearnedFrom = o.Limit, o.Window, o.LearnedFrom
			m.BoundaryAt, m.Uncertainty = max(m.BoundaryAt, o.BoundaryAt), max(m.Uncertainty, o.Uncertainty)
			m.Before, m.After = m.Before+o.Before, m.After+o.After
			m.VolleyBefore, m.VolleyAfter = m.VolleyBefore+o.VolleyBefore, m.VolleyAfter+o.VolleyAfter
			m.Span = max(m.Span, o.Span) // the longest shard's straddle
		}
		m.Admitted = m.Before + m.After
		if m.Limit > 0 {
			m.Ratio = float64(m.Admitted) / float64(m.Limit)
		}
		m.Leaks = m.Ratio >= 1.5
		return m.Report(m.VolleyBefore, m.VolleyAfter, s)
	}
	return Report{Profile: g.profile, Summary: s, Verdict: fmt.Sprintf("%s profile: %d requests", g.profile, s.Requests)}
}

// fixedBinRates turns attempt counts per bin from offset 0 into rates, the
// last bin over the part of it before end.
func fixedBinRates(bins map[int64]int, bin, end time.Duration) (rates []float64, partial bool) {
	if len(bins) == 0 {
		return nil, false
	}
	var last int64
	for i := range bins {
		last = max(last, i)
	}
	out := make([]float64, last+1)
	for i := range out {
		width := bin
		if int64(i) == last {
			width = min(bin, max(end-time.Duration(i)*bin, time.Millisecond))
			partial = width < bin
		}
		out[i] = float64(bins[int64(i)]) / width.Seconds()
	}
	return out, partial
}

// oneInstant is how far apart, on the shards' common wall clock, the
// shards' parts of a burst may go out and still be one burst: ten times
// what hosts' clocks agree to on an NTP-synchronised LAN (~1 ms) and what
// four shards on one machine reached (0.93–1.21 ms, README "Beyond one
// machine"); a limiter refilling 100/s gains one token in it.
const oneInstant = 10 * time.Millisecond

// shardRelease is when the shards' parts of a burst went out, on the common
// clock: the earliest and the latest shard's first send.
type shardRelease struct {
	apart       time.Duration
	first, last *shardRead
}

// burstRelease finds the earliest and latest shard release of the burst;
// ok is false when fewer than two shards sent part of it.
func (g *merger) burstRelease() (r shardRelease, ok bool) {
	var lo, hi time.Duration
	for i, rs := range g.burst {
		if len(rs) == 0 {
			continue
		}
		at := FirstSent(rs)
		if r.first == nil || at < lo {
			r.first, lo = g.shards[i], at
		}
		if r.last == nil || at > hi {
			r.last, hi = g.shards[i], at
		}
	}
	r.apart = hi - lo
	return r, r.first != nil && r.first != r.last
}

// outOfStep says, for a burst whose shards released their parts further
// apart than oneInstant, that the limiter saw several bursts and how to
// fix it; "" when they kept to one instant (or the profile is no burst).
func (g *merger) outOfStep() string {
	r, ok := g.burstRelease()
	if g.profile != "burst" || !ok || r.apart <= oneInstant {
		return ""
	}
	fix := fmt.Sprintf("shard %s was late to the common instant: give --idle time enough to open its connections", r.last.header.Shard)
	if !r.first.header.Start.Equal(r.last.header.Start) {
		fix = "give every shard the same absolute --start-at (a relative +DURATION is resolved by each process on its own)"
	}
	return fmt.Sprintf("the burst was NOT released at one instant: shard %s sent its part %s after shard %s on the shards' common wall clock (one instant allows %s), so the limiter saw separate bursts; %s",
		r.last.header.Shard, ms(r.apart), r.first.header.Shard, ms(oneInstant), fix)
}

// startsApart says, when the shards were told different start instants,
// how far apart and that their results are placed on one clock; "" when
// they were told one.
func (g *merger) startsApart() string {
	var first, last *shardRead
	for _, s := range g.shards {
		if s.header.Start.IsZero() {
			continue
		}
		if first == nil || s.shift < first.shift {
			first = s
		}
		if last == nil || s.shift > last.shift {
			last = s
		}
	}
	if first == nil || first.shift == last.shift {
		return ""
	}
	return fmt.Sprintf("the shards were told different start instants: shard %s's is %s after shard %s's; their results are placed on one wall clock, from the earliest",
		last.header.Shard, ms(last.shift-first.shift), first.header.Shard)
}

// notOneInstantVerdict is a merged burst's verdict when its shards were
// out of step: the counts, and why they are no test of one burst.
func notOneInstantVerdict(rep Report, why string) string {
	b := rep.Metrics.Burst
	return fmt.Sprintf("burst of %d: %d admitted (%d delayed), %d rejected, sent over %s — %s",
		b.Size, b.Admitted, b.Delayed, b.Rejected, ms(b.SendSpread), why)
}
