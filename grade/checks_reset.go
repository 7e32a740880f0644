package grade

import (
	"fmt"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/headers"
)

// statedReset is one reset a response stated: the instant it names, the
// field it came from, and whether it means the quota is whole again
// (X-RateLimit-Reset; RateLimit-Reset and reset= of drafts up to -07) or only
// that more quota comes (draft-08..10's t).
type statedReset struct {
	at    time.Time
	name  string
	raw   string
	whole bool
	src   string
}

// statedResets lists the resets r stated. A delta is measured from r's
// completion (the server decided before it), an epoch or a date is the
// instant itself: the target is on this machine, its clock is ours.
func (v *view) statedResets(r *res) []statedReset {
	var out []statedReset
	done := v.abs(r.Done)
	if x := r.x; x.Reset.Present && x.Reset.Err == nil {
		at := x.ResetAt
		if x.ResetUnit == headers.ResetDeltaSeconds {
			at = done.Add(x.ResetIn)
		}
		if !at.IsZero() {
			out = append(out, statedReset{at, x.Spelling + "-Reset", x.Reset.Raw, true, srcX})
		}
	}
	if len(r.ietf.Current) > 0 && r.ietf.Current[0].HasReset {
		cur := r.ietf.Current[0]
		out = append(out, statedReset{done.Add(time.Duration(cur.ResetSeconds) * time.Second), ietfName(r.ietf.Generation, "reset"),
			fmt.Sprint(cur.ResetSeconds), r.ietf.Generation != headers.GenerationDraft08to10, srcIETF})
	}
	return out
}

// checkResetAccurate: a reset must follow the limiter's state, as a client
// that waits for it sees it.
//
//   - Capacity is back when it says: the key's next request sent at or
//     after the stated instant, in silence (nothing sent on the key in
//     between, nothing in flight), is admitted; when the field means the
//     quota is whole, that request's Remaining shows it whole (Limit − 1
//     after its own admission; one less for a shaper's request in service).
//     The probe plans such a wait (probe/plan/silent.go). A reset that
//     never moves, or names half the real time, fails here.
//   - A response whose own Remaining says the quota is whole (Remaining =
//     Limit) states no reset beyond the resolution of whole seconds.
//
// Honest servers round a reset up (epoch seconds, whole delta seconds), so
// no tolerance beyond the clock's millisecond is given: a reset rounded to
// the nearest second is early half the time.
func checkResetAccurate(v *view) verdict {
	seen, tested := false, 0
	var problems []string
	var bad []int
	var exOK string
	note := func(format string, a ...any) {
		if len(problems) < 2 {
			problems = append(problems, fmt.Sprintf(format, a...))
		}
	}
	early, wholeAhead := 0, 0
	// A source that says Remaining > Limit somewhere cannot say when its
	// quota is whole (quota.consistent reports it).
	selfContradicting := map[string]bool{}
	for _, r := range v.rs {
		for _, q := range r.quotas() {
			if q.hasLimit && q.hasRemaining && q.remaining > q.limit {
				selfContradicting[q.src] = true
			}
		}
	}
	for i, r := range v.rs {
		srs := v.statedResets(r)
		if len(srs) == 0 {
			continue
		}
		seen = true
		n := v.silentNext(i)
		for _, s := range srs {
			if rem, ok := remainingOf(r, s.src); ok && !selfContradicting[s.src] {
				if lim, ok := limitOf(r, s.src); ok && rem > 0 && rem == lim && s.at.Sub(v.abs(r.Done)) > time.Second+v.obs.RTT {
					wholeAhead++
					bad = addSeq(bad, r.Seq)
					note("seq %d says %d of %d left (the quota is whole) yet %s %s is %s ahead", r.Seq, rem, lim, s.name, s.raw, secs(s.at.Sub(v.abs(r.Done))))
				}
			}
			if n == nil || v.abs(n.Sent).Before(s.at.Add(time.Millisecond)) {
				continue
			}
			tested++
			after := v.abs(n.Sent).Sub(s.at)
			switch {
			case n.Rejected():
				early++
				bad = addSeq(bad, r.Seq, n.Seq)
				note("seq %d: %s %s; seq %d, sent in silence %s after that instant, was rejected", r.Seq, s.name, s.raw, n.Seq, ms3(after))
				continue
			case s.whole:
				rem, okR := remainingOf(n, s.src)
				lim, okL := limitOf(n, s.src)
				if okR && okL && rem < lim-2 {
					early++
					bad = addSeq(bad, r.Seq, n.Seq)
					note("seq %d: %s %s (the quota whole); seq %d, sent in silence %s after that instant, had only %d of %d left", r.Seq, s.name, s.raw, n.Seq, ms3(after), rem, lim)
					continue
				}
			}
			if exOK == "" {
				exOK = fmt.Sprintf("seq %d: %s %s; seq %d, sent in silence %s after it, was admitted", r.Seq, s.name, s.raw, n.Seq, ms3(after))
			}
		}
	}
	switch {
	case !seen:
		return skip("no response carried a reset (X-RateLimit-Reset, RateLimit t)")
	case early > 0 || wholeAhead > 0:
		var what []string
		if early > 0 {
			what = append(what, fmt.Sprintf("capacity was not back at %d of %d stated resets waited for in silence", early, tested))
		}
		if wholeAhead > 0 {
			what = append(what, fmt.Sprintf("%d responses with a whole quota state a reset ahead", wholeAhead))
		}
		return verdict{outcome: Fail, actual: strings.Join(what, "; ") + ": " + strings.Join(problems, "; "),
			hint: "compute the reset from the limiter's state when answering (the instant the quota is whole again), rounded up", seqs: bad}
	case tested == 0:
		return skip("no request was sent in silence at or after a stated reset")
	}
	return verdict{outcome: Pass, actual: fmt.Sprintf("capacity was back at all %d stated resets waited for in silence; e.g. %s", tested, exOK)}
}

// ms3 writes a duration in milliseconds.
func ms3(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
