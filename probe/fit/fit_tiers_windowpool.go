package fit

import (
	"maps"
	"slices"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// A burst pool beside a window primary is seeded from what the run shows
// of the primary directly, not from a fit of the trace's first seconds
// (earlySeeds): a window primary that counts denied attempts stays shut
// while the trace knocks faster than its rate, so those seconds show no
// refill to fit. Two things show it. The silences: after one at least as
// long as its window the primary is whole while the pool, over a longer
// window, is not — a volley after a silence s that admits k of the total,
// then rejects, is a primary of k per a window of at most s; one that
// gives the total back is a pool whose window is at most s. And the trace
// itself, read at each short window (tracePrimaries).

// silentVolleyGap is the least silence before a volley that counts: well
// above the trace's spacing (its widest steps are a few hundred ms) and
// below the shortest silent wait the plan makes (a Retry-After of 1 s).
const silentVolleyGap = 900 * time.Millisecond

// volleyGap is the widest spacing inside a volley (sequential requests a
// round trip apart; the trace's knocks are 100 ms apart and wider).
const volleyGap = 50 * time.Millisecond

// silentVolley is what a volley after a silence admitted before its first
// rejection.
type silentVolley struct {
	silence  time.Duration
	admitted int
}

// silentVolleys are the run's volleys after silences that ended in a
// rejection (a volley admitted whole shows no capacity).
func silentVolleys(evs []observation.Event) []silentVolley {
	var out []silentVolley
	for i := 1; i < len(evs); i++ {
		s := evs[i].At.Sub(evs[i-1].At)
		if s < silentVolleyGap {
			continue
		}
		k, j := 0, i
		for ; j < len(evs) && evs[j].Admitted && (j == i || evs[j].At.Sub(evs[j-1].At) <= volleyGap); j++ {
			k++
		}
		if k > 0 && j < len(evs) && !evs[j].Admitted && evs[j].At.Sub(evs[j-1].At) <= volleyGap {
			out = append(out, silentVolley{silence: s, admitted: k})
		}
	}
	return out
}

// windowsWithin are the common windows from a quarter of d to d, and d itself
// to the millisecond: what a window that came back whole after a silence
// of d may be.
func windowsWithin(d time.Duration) []time.Duration {
	ws := []time.Duration{d.Round(windowResolution)}
	for _, w := range commonWindows {
		if w <= d && w >= d/4 {
			ws = append(ws, w)
		}
	}
	return ws
}

// windowPoolCandidates are burst pools beside window primaries: a
// primary seeded by the silent volleys (what a partial volley gave back,
// per each window it allows) or by the trace (tracePrimaries), a pool of
// the rest (±1) per each window a whole return allows, beside the
// trace's windows.
func windowPoolCandidates(evs []observation.Event, r regime, ws, wallWs []time.Duration) []limiter.Config {
	volleys := silentVolleys(evs)
	total := r.burstAdmitted
	for _, v := range volleys {
		total = max(total, v.admitted)
	}
	poolWs := slices.Clone(ws)
	for _, v := range volleys {
		if v.admitted >= total-1 {
			poolWs = append(poolWs, windowsWithin(v.silence)...)
		}
	}
	slices.Sort(poolWs)
	poolWs = slices.Compact(poolWs)
	var primaries []limiter.Tier
	for _, v := range volleys {
		if v.admitted >= total-1 {
			continue
		}
		for _, w := range windowsWithin(v.silence) {
			primaries = append(primaries,
				limiter.Tier{Algo: limiter.SlidingLog, Limit: v.admitted, Window: w},
				limiter.Tier{Algo: limiter.FixedWindow, Limit: v.admitted, Window: w, Align: limiter.AlignFirst})
		}
	}
	primaries = append(primaries, tracePrimaries(evs, r, total)...)
	// The pool holds what the burst took beyond the primary — or, when
	// the requests before the burst (the calibration's) were charged to
	// a primary whose window still held them, what everything up to the
	// burst took beyond it.
	sinceStart := 0
	for _, e := range evs {
		if e.Admitted && !e.At.After(r.burstAt) {
			sinceStart++
		}
	}
	seen := map[limiter.Tier]bool{}
	var out []limiter.Config
	for _, p := range primaries {
		if seen[p] || p.Limit >= total {
			continue
		}
		seen[p] = true
		pools := map[int]bool{}
		for _, all := range []int{total, sinceStart} {
			for d := -1; d <= 1; d++ {
				pools[all-p.Limit+d] = true
			}
		}
		for _, l := range slices.Sorted(maps.Keys(pools)) {
			for _, s := range secondTiers(l, poolWs, wallWs) {
				out = append(out, limiter.Config{Algo: limiter.Tiers, TierMode: limiter.TiersEither, Tiers: [2]limiter.Tier{p, s}})
			}
		}
	}
	return out
}

// tracePrimaryMaxWindow bounds the common windows a primary is read from
// the trace at: a primary is the short limit of the two.
const tracePrimaryMaxWindow = 10 * time.Second

// tracePrimaries are the primaries the trace after the last burst shows,
// the pool being spent: the fixed windows of its clumps (clumpPrimaries),
// and the sliding logs of at most tiersSeeds limits per window that
// decide it as it was decided: every admission found fewer than L
// requests in the window before it, every rejection at least L —
// attempts, for a primary that counts denied attempts (one that stays shut
// while the trace knocks faster than its rate, and opens when the trace's
// widening steps fall below it), or admissions, for one that does not.
func tracePrimaries(evs []observation.Event, r regime, total int) []limiter.Tier {
	key, found := "", false
	for _, e := range evs {
		if e.Burst != "" && !e.At.After(r.burstAt) {
			key, found = e.Key, true
		}
	}
	// The key's requests in time order, and how many of them were
	// admitted before each; trace indexes those after the last burst.
	var mine []observation.Event
	var admittedBefore, trace []int
	n := 0
	for _, e := range evs {
		if e.Key != key {
			continue
		}
		if e.At.After(r.burstAt) && e.Burst == "" {
			trace = append(trace, len(mine))
		}
		mine, admittedBefore = append(mine, e), append(admittedBefore, n)
		if e.Admitted {
			n++
		}
	}
	if !found || len(trace) < minStepRun {
		return nil
	}
	out := clumpPrimaries(mine, trace)
	for _, counting := range []bool{true, false} {
		for _, w := range commonWindows {
			if w > tracePrimaryMaxWindow {
				break
			}
			lo, hi := 1, total-1
			from := 0 // the key's first request inside the window before the current one
			for _, k := range trace {
				for from < k && !mine[from].At.After(mine[k].At.Add(-w)) {
					from++
				}
				inWindow := k - from
				if !counting {
					inWindow = admittedBefore[k] - admittedBefore[from]
				}
				if mine[k].Admitted {
					lo = max(lo, inWindow+1)
				} else {
					hi = min(hi, inWindow)
				}
			}
			for l := lo; l <= hi && l < lo+tiersSeeds; l++ {
				out = append(out, limiter.Tier{Algo: limiter.SlidingLog, Limit: l, Window: w, CountRejected: counting})
			}
		}
	}
	return out
}

// clumpPrimaries are the fixed-window primaries the trace's clumps show:
// a window that opens at the first request after the last one closed
// (or at a boundary of the wall grid) admits its limit in a run of
// consecutive admissions, then nothing until the next window, at least
// its length later. Each run length seen is a limit; the windows are
// the common ones from half the shortest time between the starts of two
// runs to it, and that time itself.
func clumpPrimaries(mine []observation.Event, trace []int) []limiter.Tier {
	var starts []time.Time
	lengths := map[int]int{}
	run := 0
	for i, k := range trace {
		if mine[k].Admitted {
			if run == 0 {
				starts = append(starts, mine[k].At)
			}
			run++
		}
		if run > 0 && (!mine[k].Admitted || i == len(trace)-1) {
			lengths[run]++
			run = 0
		}
	}
	if len(starts) < 2 {
		return nil
	}
	gap := starts[1].Sub(starts[0])
	for i := 2; i < len(starts); i++ {
		gap = min(gap, starts[i].Sub(starts[i-1]))
	}
	ws := []time.Duration{gap.Round(wallUnit)}
	for _, w := range commonWindows {
		if w <= gap && w >= gap/2 {
			ws = append(ws, w)
		}
	}
	ls := slices.SortedFunc(maps.Keys(lengths), func(a, b int) int { return lengths[b] - lengths[a] })
	var out []limiter.Tier
	for _, l := range ls[:min(len(ls), tiersSeeds)] {
		for _, w := range ws {
			if w <= 0 {
				continue
			}
			out = append(out, limiter.Tier{Algo: limiter.FixedWindow, Limit: l, Window: w, Align: limiter.AlignFirst})
			if wallWindow(w) {
				out = append(out, limiter.Tier{Algo: limiter.FixedWindow, Limit: l, Window: w, Align: limiter.AlignWall})
			}
		}
	}
	return out
}
