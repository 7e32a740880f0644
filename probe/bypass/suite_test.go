package bypass

import (
	"slices"
	"testing"
)

// record builds the suite's records from a compact script: o own rejected,
// O own admitted, t trial rejected, T trial admitted, x exhaust (rejected),
// each the next seq.
func record(seq *int, trial Trial, script string) []Record {
	var out []Record
	for _, c := range script {
		*seq++
		r := Record{Seq: *seq}
		switch c {
		case 'o', 'O':
			r.Phase = OwnPhase(trial)
		case 't', 'T':
			r.Phase = TrialPhase(trial)
		case 'x':
			r.Phase = ExhaustPhase
		}
		if c == 'O' || c == 'T' {
			r.Admitted, r.Status = true, 200
		} else {
			r.Rejected, r.Status = true, 429
		}
		out = append(out, r)
	}
	return out
}

// The stream is the record: the suite read back from it judges each trial
// by its attempts, keeps a finding over a later unclear attempt, and says
// what each trial request carried, numbered across attempts.
func TestReadJudgesEachTrialFromTheStream(t *testing.T) {
	b := Base{Method: "GET", Target: "/api"}
	byName := map[string]Trial{}
	for _, tr := range Trials(b) {
		byName[tr.Name] = tr
	}
	seq := 0
	var recs []Record
	recs = append(recs, record(&seq, byName["x-client-ip"], "xxoToTo")...)
	recs = append(recs, record(&seq, byName["junk-query"], "oto")...)
	recs = append(recs, record(&seq, byName["user-agent"], "oTO")...) // the key recovered: unclear
	recs = append(recs, record(&seq, byName["user-agent"], "x")...)   // spent again
	recs = append(recs, record(&seq, byName["user-agent"], "oto")...) // a second attempt: held
	recs = append(recs, record(&seq, byName["new-connection"], "oToTo")...)
	recs = append(recs, record(&seq, byName["new-connection"], "xoTO")...) // a later recovery takes nothing back
	suite := Read(b, recs)
	got := suite.Trials
	want := map[string]Outcome{"x-client-ip": Found, "junk-query": Held, "new-connection": Found, "user-agent": Held}
	if len(got) != len(want) {
		t.Fatalf("%d results: %+v", len(got), got)
	}
	for _, r := range got {
		if r.Outcome != want[r.Trial] {
			t.Errorf("%s: %s (%s), want %s", r.Trial, r.Outcome, r.Why, want[r.Trial])
		}
	}
	byTrial := map[string]Result{}
	for _, r := range got {
		byTrial[r.Trial] = r
	}
	if xci := byTrial["x-client-ip"]; !slices.Equal(xci.Sent, []string{"X-Client-IP: 192.0.2.2", "X-Client-IP: 192.0.2.3"}) {
		t.Errorf("x-client-ip sent %q", xci.Sent)
	}
	if ua := byTrial["user-agent"]; !slices.Equal(ua.Sent, []string{"User-Agent: Mozilla/5.0 (ratecheck 2)"}) {
		t.Errorf("user-agent's second attempt numbered %q, want its second request", ua.Sent)
	}
}

// The trials that did not run are named; a stream with none is no suite.
func TestReadNamesTheTrialsThatDidNotRun(t *testing.T) {
	b := Base{Method: "GET", Target: "/"}
	if Read(b, nil) != nil {
		t.Fatal("a suite from no records")
	}
	seq := 0
	s := Read(b, record(&seq, Trials(b)[0], "oto"))
	if len(s.Trials) != 1 || len(s.NotRun) != len(Trials(b))-1 || slices.Contains(s.NotRun, Trials(b)[0].Name) {
		t.Errorf("ran %v, not run %v", s.Trials, s.NotRun)
	}
}

// The plan chains trials: each starts right after the rejection that ended
// the previous one (or the exhaustion), and is read with that rejection
// before it — never with an admission before it.
func TestReadChainsTrialsOnTheRejectionBefore(t *testing.T) {
	b := Base{Method: "GET", Target: "/a"}
	ts := Trials(b)
	seq := 0
	var recs []Record
	recs = append(recs, record(&seq, ts[0], "x")...)
	recs = append(recs, record(&seq, ts[0], "ToTo")...)
	recs = append(recs, record(&seq, ts[1], "to")...)
	recs = append(recs, record(&seq, ts[2], "O")...) // the key recovered at ts[2]'s own request
	recs = append(recs, record(&seq, ts[3], "To")...)
	s := Read(b, recs)
	want := []Outcome{Found, Held, Unclear, Unclear}
	for i, r := range s.Trials {
		if r.Outcome != want[i] {
			t.Errorf("%s: %s (%s), want %s", r.Trial, r.Outcome, r.Why, want[i])
		}
	}
	if got := s.Trials[0].Seqs; !slices.Equal(got, []int{1, 2, 3, 4, 5}) {
		t.Errorf("the first trial's requests %v, want the exhaustion's rejection first", got)
	}
}
