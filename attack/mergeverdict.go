package attack

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
		m.conclude(s, m.TargetRate > 0)
		return m.report(m.Planned, s)
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
		return m.report(s)
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
		m.FinishP50, m.FinishP99 = quantile(done, 0.5), quantile(done, 0.99)
		if m.Successes > 0 {
			m.Amplification = float64(m.Attempts) / float64(m.Successes)
		}
		if m.Elapsed > 0 {
			m.MeanRate = float64(m.Attempts) / m.Elapsed.Seconds()
		}
		var partial bool
		m.AttemptRate, partial = fixedBinRates(g.bins, clientsBin, m.Elapsed)
		m.PeakRate = peakRate(m.AttemptRate, partial)
		return m.report(g.profile, s)
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
		return m.report(m.VolleyBefore, m.VolleyAfter, s)
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
