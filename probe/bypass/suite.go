package bypass

import (
	"fmt"
	"strconv"
	"strings"
)

// The phases of the suite's requests in the results stream: a trial's own
// requests and the key's own around them carry the trial's name, so the
// suite is read back from any stream (report infers again from it).
const (
	trialPhase = "bypass:"     // + trial name: the trial's request
	ownPhase   = "bypass-own:" // + trial name: the key's own request around it
	// ExhaustPhase is the key's own requests that spend it before a trial.
	ExhaustPhase = "bypass-exhaust"
)

// TrialPhase is the phase of trial t's requests; OwnPhase of the key's own
// requests sent around them.
func TrialPhase(t Trial) string { return trialPhase + t.Name }
func OwnPhase(t Trial) string   { return ownPhase + t.Name }

// IsPhase reports a phase of the suite.
func IsPhase(phase string) bool {
	return phase == ExhaustPhase || strings.HasPrefix(phase, trialPhase) || strings.HasPrefix(phase, ownPhase)
}

// IsTrial reports a trial's own request: another client's traffic as far
// as the limit is concerned when it got around it, so never replayed as the
// probe's or graded as its contract.
func IsTrial(phase string) bool { return strings.HasPrefix(phase, trialPhase) }

// asOwn reports a request that counts as the key's own for trial t: its own
// requests around t, and the rejection before t's attempt (the exhaustion's,
// or another trial's: a rejected request of any trial shows the key spent).
func asOwn(t Trial, phase string) bool {
	name, own, _ := parsePhase(phase)
	return own || name != t.Name
}

// parsePhase is the trial a phase belongs to, and whether it is an own
// request.
func parsePhase(phase string) (name string, own, ok bool) {
	if name, ok := strings.CutPrefix(phase, ownPhase); ok {
		return name, true, true
	}
	name, ok = strings.CutPrefix(phase, trialPhase)
	return name, false, ok
}

// Record is one request of the suite as the results stream has it.
type Record struct {
	Seq      int
	Phase    string
	Status   int  // 0: no answer
	Admitted bool // a 2xx
	Rejected bool // the limiter's rejection
}

// Result is one trial's outcome with the requests that show it.
type Result struct {
	Trial   string  `json:"trial"`
	Kind    Kind    `json:"kind"`
	What    string  `json:"what"`
	Outcome Outcome `json:"outcome"`
	Why     string  `json:"why"`
	// Seqs are the deciding attempt's requests in the order sent, the key's
	// own and the trial's; Sent says what each trial request carried.
	Seqs []int    `json:"seqs"`
	Sent []string `json:"sent,omitempty"`
}

// Read judges every trial of b's suite that the records show, in the
// suite's order, and lists those of b's trials that did not run. An attempt
// is a run of consecutive requests of one trial, after the rejection just
// before it (the previous trial's last request, or the exhaustion's); a
// trial's outcome is its last attempt's, unless an earlier
// one found a way around (a finding is never taken back by a later
// recovery). Nil when no trial ran.
func Read(b Base, recs []Record) *Suite {
	attempts := map[string][][]Record{}
	last := map[string]int{} // the seq of each trial's last request
	bySeq := map[int]Record{}
	for _, r := range recs {
		bySeq[r.Seq] = r
	}
	for _, r := range recs {
		name, _, ok := parsePhase(r.Phase)
		if !ok {
			continue
		}
		as := attempts[name]
		if len(as) == 0 || last[name] != r.Seq-1 {
			as = append(as, nil)
			if before, ok := bySeq[r.Seq-1]; ok && before.Rejected {
				as[len(as)-1] = append(as[len(as)-1], before)
			}
		}
		as[len(as)-1] = append(as[len(as)-1], r)
		attempts[name], last[name] = as, r.Seq
	}
	if len(attempts) == 0 {
		return nil
	}
	s := &Suite{}
	// A recorded probe does not say whether its request had cookies or
	// which other methods the user allowed: any trial that ran is known
	// by its name.
	known := b
	known.Cookie, known.Methods = true, allMethods
	for _, t := range Trials(known) {
		as := attempts[t.Name]
		if len(as) == 0 {
			continue
		}
		res := judgeAttempt(t, as[len(as)-1], sentBefore(t, as, len(as)-1))
		for i, a := range as[:len(as)-1] {
			if r := judgeAttempt(t, a, sentBefore(t, as, i)); r.Outcome == Found {
				res = r
				break
			}
		}
		s.Trials = append(s.Trials, res)
	}
	for _, t := range Trials(b) {
		if len(attempts[t.Name]) == 0 {
			s.NotRun = append(s.NotRun, t.Name)
		}
	}
	return s
}

// allMethods are the methods of RFC 9110 §9 a trial may have used.
var allMethods = []string{"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"}

// sentBefore counts the trial requests of the attempts before i: the index
// the next one's Request(n) numbers from.
func sentBefore(t Trial, as [][]Record, i int) int {
	n := 0
	for _, a := range as[:i] {
		for _, r := range a {
			if !asOwn(t, r.Phase) {
				n++
			}
		}
	}
	return n
}

// judgeAttempt judges one attempt of t whose first trial request was the
// (n+1)-th of the trial.
func judgeAttempt(t Trial, recs []Record, n int) Result {
	res := Result{Trial: t.Name, Kind: t.Kind, What: t.What}
	seq := make([]Answer, 0, len(recs))
	for _, r := range recs {
		own := asOwn(t, r.Phase)
		seq = append(seq, Answer{Own: own, Admitted: r.Admitted, Rejected: r.Rejected, Status: r.Status})
		res.Seqs = append(res.Seqs, r.Seq)
		if !own {
			n++
			res.Sent = append(res.Sent, t.Request(n).String())
		}
	}
	v := Judge(seq)
	res.Outcome, res.Why = v.Outcome, v.Why
	return res
}

// String is the variant in words, as a request line or header lines show
// it: "HEAD", "/api/?x", "X-Forwarded-For: 203.0.113.2", "new connection",
// "HTTP/2".
func (v Variant) String() string {
	var parts []string
	if v.Method != "" {
		parts = append(parts, v.Method)
	}
	if v.Target != "" {
		parts = append(parts, v.Target)
	}
	parts = append(parts, v.Set...)
	for _, d := range v.Drop {
		parts = append(parts, "no "+d)
	}
	if v.Fresh {
		parts = append(parts, "new connection")
	}
	if v.OtherProtocol != "" {
		parts = append(parts, v.OtherProtocol)
	}
	return strings.Join(parts, "; ")
}

// Suite is what the bypass suite did on one probe.
type Suite struct {
	// Trials are the trials that ran, in the suite's order.
	Trials []Result `json:"trials"`
	// NotRun names the trials that did not run (the probe's notes say
	// why: the suite's share of the budget spent, the key recovering).
	NotRun []string `json:"not_run,omitempty"`
}

// OfKind are the suite's results of kind k.
func (s *Suite) OfKind(k Kind) []Result {
	var out []Result
	for _, r := range s.Trials {
		if r.Kind == k {
			out = append(out, r)
		}
	}
	return out
}

// Found are the trials that got around the limit.
func (s *Suite) Found() []Result {
	var out []Result
	for _, r := range s.Trials {
		if r.Outcome == Found {
			out = append(out, r)
		}
	}
	return out
}

// Summary is the suite in one line: what got around the limit, or how many
// trials held, and how many did not run.
func (s *Suite) Summary() string {
	counts := map[Outcome]int{}
	for _, r := range s.Trials {
		counts[r.Outcome]++
	}
	var out string
	if found := s.Found(); len(found) > 0 {
		names := make([]string, len(found))
		for i, r := range found {
			names[i] = r.Trial
		}
		out = fmt.Sprintf("got around the limit: %s; ", strings.Join(names, ", "))
	}
	out += fmt.Sprintf("%d of %d trials held", counts[Held]+counts[NotServed], len(s.Trials))
	if n := counts[Unclear]; n > 0 {
		out += fmt.Sprintf(", %d unclear", n)
	}
	if n := len(s.NotRun); n > 0 {
		out += fmt.Sprintf(", %d not run", n)
	}
	return out
}

// Line is one trial in words: its outcome, name, what it sent, why.
func (r Result) Line() string {
	sent := ""
	if len(r.Sent) > 0 {
		sent = " [" + strings.Join(r.Sent, " | ") + "]"
	}
	return fmt.Sprintf("%-10s %s%s: %s (requests %s)", r.Outcome, r.Trial, sent, r.Why, seqList(r.Seqs))
}

// seqList is seqs as "4, 5, 6".
func seqList(seqs []int) string {
	parts := make([]string, len(seqs))
	for i, n := range seqs {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ", ")
}
