package bypass

import "testing"

var (
	ownRejected   = Answer{Own: true, Rejected: true, Status: 429}
	ownAdmitted   = Answer{Own: true, Admitted: true, Status: 200}
	trialAdmitted = Answer{Admitted: true, Status: 200}
	trialRejected = Answer{Rejected: true, Status: 429}
	trialNotFound = Answer{Status: 404}
)

// The plan's loop on a scripted server: what it sends, when it stops, and
// the verdict — for each way a trial can go.
func TestNextAndJudgeOnEachCourse(t *testing.T) {
	for _, c := range []struct {
		name  string
		trial []Answer // the trial's answers in turn
		own   []Answer // the own requests' answers in turn
		sent  int
		want  Outcome
	}{
		{"bypass", []Answer{trialAdmitted, trialAdmitted}, []Answer{ownRejected, ownRejected}, 4, Found},
		{"held", []Answer{trialRejected}, nil, 1, Held},
		{"404", []Answer{trialNotFound}, nil, 1, NotServed},
		{"recovered between", []Answer{trialAdmitted}, []Answer{ownAdmitted}, 2, Unclear},
		{"room for one", []Answer{trialAdmitted, trialRejected}, []Answer{ownRejected}, 3, Unclear},
		{"recovered at the second", []Answer{trialAdmitted, trialAdmitted}, []Answer{ownRejected, ownAdmitted}, 4, Unclear},
	} {
		seq := []Answer{ownRejected} // the rejection before the trial
		ti, oi := 0, 0
		for len(seq) < 20 {
			own, done := Next(seq)
			if done {
				break
			}
			if own {
				seq = append(seq, c.own[oi])
				oi++
			} else {
				seq = append(seq, c.trial[ti])
				ti++
			}
		}
		if got := Judge(seq); len(seq)-1 != c.sent || got.Outcome != c.want {
			t.Errorf("%s: %d sent, %s (%s); want %d sent, %s", c.name, len(seq)-1, got.Outcome, got.Why, c.sent, c.want)
		}
	}
}
