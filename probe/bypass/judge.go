package bypass

import "fmt"

// Outcome is what one trial showed.
type Outcome string

// The outcomes of a trial.
const (
	// Found: the trial's requests were admitted while the key's own,
	// sent just before and after each, were rejected: a way around.
	Found Outcome = "found"
	// Held: the trial's request was rejected like the key's own.
	Held Outcome = "held"
	// NotServed: the server answered the variant with neither an
	// admission nor a rejection (a 404, a redirect): no way around, and no
	// test of the limit either.
	NotServed Outcome = "not-served"
	// Unclear: the trial could not be told apart from the limit's own
	// recovery (an own request admitted, or one admission alone).
	Unclear Outcome = "unclear"
)

// Confirmations is how many trial requests must be admitted, each between
// rejected own requests, for a finding: one admission could be the limit
// recovering for an instant, and the trial's request taking the capacity
// the next own request would have had; two in a row, each fenced by a
// rejection, is not how a limit recovers.
const Confirmations = 2

// Answer is one request of a trial, own or trial, as it was answered.
type Answer struct {
	Own      bool // the key's own request (else the trial's)
	Admitted bool // a 2xx
	Rejected bool // the limiter's rejection (429, or the status it rejects with)
	Status   int  // the status, for the reason (0: no answer)
}

// Verdict is a trial's outcome with the reason in words.
type Verdict struct {
	Outcome Outcome
	Why     string
}

// Next says what the plan sends after seq, a trial's answers so far in the
// order sent (the plan starts it with the rejection just before the trial,
// which shows the key exhausted): the trial's request, then the key's own
// after every admitted one, until the trial is decided. A rejected trial
// request needs no own request after it: nothing recovers the key for the
// trial alone, so a rejection holds whatever the key does next. done: the
// trial is decided, Judge(seq) says how.
func Next(seq []Answer) (own, done bool) {
	if len(seq) == 0 {
		return false, false
	}
	if last := seq[len(seq)-1]; !last.Own {
		return last.Admitted, !last.Admitted
	}
	return false, Judge(seq).Outcome != Unclear || !stillOpen(seq)
}

// stillOpen: seq can still become a finding — every own request after the
// first trial request rejected and every trial request admitted, fewer than
// Confirmations so far.
func stillOpen(seq []Answer) bool {
	admitted := 0
	for _, a := range seq {
		switch {
		case a.Own && !a.Rejected:
			return false
		case !a.Own && !a.Admitted:
			return false
		case !a.Own:
			admitted++
		}
	}
	return admitted < Confirmations
}

// Judge reads a trial's answers in the order sent.
func Judge(seq []Answer) Verdict {
	admitted := 0
	for i, a := range seq {
		if a.Own {
			if !a.Rejected {
				return Verdict{Unclear, fmt.Sprintf("the key's own request %d was %s: the limit recovered, so the trial shows nothing", i+1, describe(a))}
			}
			continue
		}
		switch {
		case a.Rejected && admitted > 0:
			return Verdict{Unclear, fmt.Sprintf("admitted once, then rejected (%d): a counter of its own with room for one, or the limit recovering for an instant", a.Status)}
		case a.Rejected:
			return Verdict{Held, fmt.Sprintf("rejected (%d) like the key's own requests", a.Status)}
		case !a.Admitted:
			return Verdict{NotServed, fmt.Sprintf("%s: the server does not serve it, so it neither gets around the limit nor tests it", describe(a))}
		case i+1 >= len(seq) || !seq[i+1].Own:
			return Verdict{Unclear, "admitted, and not followed by one of the key's own requests"}
		}
		admitted++
	}
	if admitted >= Confirmations {
		return Verdict{Found, fmt.Sprintf("%d requests admitted, each between rejected requests of the key's own", admitted)}
	}
	return Verdict{Unclear, fmt.Sprintf("%d request admitted between rejected own ones: the limit recovering for an instant could do that", admitted)}
}

// describe is an answer in words.
func describe(a Answer) string {
	switch {
	case a.Status == 0:
		return "not answered"
	case a.Admitted:
		return fmt.Sprintf("admitted (%d)", a.Status)
	}
	return fmt.Sprintf("answered %d", a.Status)
}
