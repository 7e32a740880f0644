package expect

import (
	"github.com/ratecheck/ratecheck/probe/bypass"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/results"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in      string
		key     string
		num     float64
		tol     float64
		words   string
		wantErr string
	}{
		{in: "family=token_bucket", key: KeyFamily, words: "token_bucket"},
		{in: "Family=Fixed_Window", key: KeyFamily, words: "fixed_window"},
		{in: "rate=10/s±10%", key: KeyRate, num: 10, tol: 1},
		{in: "rate=600/m +- 1/s", key: KeyRate, num: 10, tol: 1},
		{in: "rate=10/s+/-0.5", key: KeyRate, num: 10, tol: 0.5},
		{in: "rate=5/500ms", key: KeyRate, num: 10},
		{in: "burst=20±2", key: KeyBurst, num: 20, tol: 2},
		{in: "burst=20", key: KeyBurst, num: 20},
		{in: "limit=100", key: KeyLimit, num: 100},
		{in: "window=60s", key: KeyWindow, num: 60},
		{in: "window=1m±5s", key: KeyWindow, num: 60, tol: 5},
		{in: "max_inflight=4", key: KeyMaxInflight, num: 4},
		{in: "status=429", key: KeyStatus, words: "429"},
		{in: "status=429, 503", key: KeyStatus, words: "429,503"},
		{in: "retry-after=present", key: KeyRetryAfter, words: "present"},
		{in: "retry_after=Absent", key: KeyRetryAfter, words: "absent"},
		{in: "scope=per-key", key: KeyScope, words: "per_key"},
		{in: "scope=per_ip", key: KeyScope, words: "per_ip"},
		{in: "scope=Per-IP", key: KeyScope, words: "per_ip"},
		{in: "scope=per-connection", key: KeyScope, words: "per_connection"},
		{in: "min-grade=b", key: KeyMinGrade, words: "B"},
		{in: "family", wantErr: "KEY=VALUE"},
		{in: "famly=token_bucket", wantErr: `unknown expectation key "famly"`},
		{in: "family=gcra", wantErr: `unknown family "gcra"`},
		{in: "rate=10", wantErr: "COUNT/UNIT"},
		{in: "rate=10/s±", wantErr: "tolerance after ± is empty"},
		{in: "rate=10/s±ten%", wantErr: "not a percentage"},
		{in: "burst=twenty", wantErr: "not a whole number"},
		{in: "burst=-1", wantErr: "not a whole number"},
		{in: "window=60", wantErr: "not a duration"},
		{in: "status=42", wantErr: "not an HTTP status"},
		{in: "retry-after=yes", wantErr: "present or absent"},
		{in: "scope=ip", wantErr: "per_key, per_ip, per_connection or global"},
		{in: "min-grade=E", wantErr: "use a letter"},
		{in: "limit=", wantErr: "value is empty"},
	}
	for _, c := range cases {
		e, err := Parse(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("Parse(%q) error = %v, want one containing %q", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if e.Key != c.key || e.Num != c.num || abs(e.Tol-c.tol) > 1e-9 || strings.Join(e.Words, ",") != c.words {
			t.Errorf("Parse(%q) = %+v, want key %s num %v tol %v words %q", c.in, e, c.key, c.num, c.tol, c.words)
		}
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func TestExpected(t *testing.T) {
	cases := map[string]string{
		"rate=10/s":          "10/s ± 10% (default) (9/s – 11/s)",
		"rate=10/s±5%":       "10/s ± 5% (9.5/s – 10.5/s)",
		"burst=20±2":         "20 ± 2 (18 – 22)",
		"burst=20":           "20",
		"window=60s":         "60s ± 10% (default) (54s – 66s)",
		"status=429,503":     "every rejection is 429 or 503",
		"retry-after=absent": "no Retry-After on any rejection",
		"min-grade=B":        "grade B or better",
	}
	for in, want := range cases {
		e, err := Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Expected(); got != want {
			t.Errorf("%s: Expected() = %q, want %q", in, got, want)
		}
	}
}

func tb(rate, rateErr float64, burst, burstErr int) probe.Inference {
	return probe.Inference{Family: "token_bucket", RatePerS: rate, RateErr: rateErr, Burst: burst, BurstErr: burstErr,
		Scope: "untested", Explained: 100, Decisions: 100, Confidence: 0.9,
		Alternatives: []probe.Alternative{{Family: "leaky_shaping", Explained: 98, Equivalent: true}, {Family: "fixed_window", Explained: 80}}}
}

// withTiers adds a two-tier alternative explaining n decisions, not
// equivalent (the inference's rule for a composition that explains no
// more than the named family).
func withTiers(inf probe.Inference, n int) probe.Inference {
	inf.Alternatives = append(slices.Clone(inf.Alternatives), probe.Alternative{Family: "tiers", Explained: n})
	return inf
}

func TestEvaluate(t *testing.T) {
	fw := probe.Inference{Family: "fixed_window", Limit: 100, LimitErr: 1, WindowS: 60, WindowErrS: 0.5, Scope: "per_key", Decisions: 50, Explained: 50}
	fwExact := probe.Inference{Family: "fixed_window", Limit: 100, WindowS: 60, Scope: "per_key", Decisions: 50, Explained: 50}
	conc := probe.Inference{Family: "concurrency", MaxInflight: 4, Scope: "untested"}
	none := probe.Inference{Family: "none", Scope: "untested"}
	inconclusive := probe.Inference{Family: probe.Inconclusive, Reason: "no model explains the decisions", Scope: "untested"}
	rej := map[int]int{429: 30}
	held := &bypass.Suite{Trials: []bypass.Result{{Trial: "junk-query", Outcome: bypass.Held}}, NotRun: []string{"user-agent"}}
	found := &bypass.Suite{Trials: []bypass.Result{{Trial: "junk-query", What: "a junk query", Outcome: bypass.Found, Seqs: []int{4, 5}}}}
	unclear := &bypass.Suite{Trials: []bypass.Result{{Trial: "user-agent", Outcome: bypass.Unclear}}}
	with := func(inf probe.Inference, s *bypass.Suite) probe.Inference { inf.Bypass = s; return inf }
	cases := []struct {
		exp    string
		facts  Facts
		result string
		actual string // a substring of Actual
	}{
		{"family=token_bucket", Facts{Inference: tb(10.02, 0.05, 20, 0)}, Pass, "token_bucket"},
		{"bypass=none", Facts{Inference: with(fw, held)}, Pass, "none of 1 trials"},
		{"bypass=none", Facts{Inference: with(inconclusive, found)}, Fail, "junk-query got around the limit"}, // the trial ran, whatever the family
		{"bypass=none", Facts{Inference: with(inconclusive, held)}, Untested, "inconclusive"},
		{"bypass=none", Facts{Inference: with(fw, unclear)}, Untested, "not tested"},
		{"bypass=none", Facts{Inference: fw}, Untested, "not tested"},
		{"bypass=none", Facts{Inference: with(fw, found), Interrupted: true}, Untested, "not tested"},
		{"family=fixed_window", Facts{Inference: tb(10.02, 0.05, 20, 0)}, Fail, "token_bucket"},
		{"family=leaky_shaping", Facts{Inference: tb(10.02, 0.05, 20, 0)}, Pass, "token_bucket"}, // equivalent on this run
		// A composition that explains every decision the named bucket
		// does, taken for the simpler family: neither refuted nor shown.
		{"family=tiers", Facts{Inference: withTiers(tb(10.02, 0.05, 20, 0), 100)}, Untested, "token_bucket"},
		{"family=tiers", Facts{Inference: withTiers(tb(10.02, 0.05, 20, 0), 97)}, Fail, "token_bucket"},
		{"family=token_bucket", Facts{Inference: none}, Fail, "no request was rejected"},
		{"family=token_bucket", Facts{Inference: inconclusive}, Untested, "inconclusive"},
		{"rate=10/s±10%", Facts{Inference: tb(10.02, 0.05, 20, 0)}, Pass, "10.02 ± 0.05/s"},
		{"rate=10/s", Facts{Inference: tb(10.9, 0, 20, 0)}, Pass, "10.9/s"},
		{"rate=10/s", Facts{Inference: tb(11.2, 0, 20, 0)}, Fail, "11.2/s"},
		{"rate=10/s±1%", Facts{Inference: tb(10.05, 0.05, 20, 0)}, Pass, "10.05 ± 0.05/s"},   // inside the tolerance
		{"rate=10/s±1%", Facts{Inference: tb(10.15, 0.1, 20, 0)}, Untested, "10.15 ± 0.1/s"}, // straddles its edge
		{"rate=10/s±1%", Facts{Inference: tb(10.25, 0.1, 20, 0)}, Fail, ""},
		{"rate=5/s", Facts{Inference: fw}, Fail, "(fixed_window: 100 ± 1 per 60 ± 0.5s)"},
		{"rate=5/s", Facts{Inference: fwExact}, Fail, "1.667/s (fixed_window: 100 per 60s)"},
		{"rate=100/m", Facts{Inference: fw}, Pass, "1.667"},
		{"rate=10/s", Facts{Inference: conc}, Fail, "concurrency has no rate"},
		{"rate=10/s", Facts{Inference: none}, Fail, "no limit observed"},
		{"rate=10/s", Facts{Inference: inconclusive}, Untested, "inconclusive"},
		{"burst=20±2", Facts{Inference: tb(10, 0, 22, 0)}, Pass, "22"},
		{"burst=20±2", Facts{Inference: tb(10, 0, 23, 0)}, Fail, "23"},
		{"burst=20", Facts{Inference: tb(10, 0, 21, 1)}, Untested, "21 ± 1"}, // 20 to 22: maybe 20
		{"burst=20±2", Facts{Inference: tb(10, 0, 21, 1)}, Pass, "21 ± 1"},
		{"burst=18", Facts{Inference: tb(10, 0, 21, 1)}, Fail, "21 ± 1"},
		{"burst=20", Facts{Inference: fw}, Fail, "fixed_window has no burst"},
		{"limit=100", Facts{Inference: fw}, Untested, "100 ± 1"},
		{"limit=100±1", Facts{Inference: fw}, Pass, "100 ± 1"},
		{"limit=100", Facts{Inference: fwExact}, Pass, "100"},
		{"limit=98", Facts{Inference: fw}, Fail, "100 ± 1"},
		{"limit=4", Facts{Inference: conc}, Pass, "(concurrency cap)"},
		{"limit=100", Facts{Inference: tb(10, 0, 20, 0)}, Fail, "token_bucket has no limit"},
		{"window=60s", Facts{Inference: fw}, Pass, "60 ± 0.5s"},
		{"window=1m±0s", Facts{Inference: fw}, Untested, "60 ± 0.5s"},
		{"window=1m±0s", Facts{Inference: fwExact}, Pass, "60s"},
		{"window=2m", Facts{Inference: fw}, Fail, ""},
		{"max-inflight=4", Facts{Inference: conc}, Pass, "4"},
		{"max-inflight=5", Facts{Inference: conc}, Fail, "4"},
		{"status=429", Facts{Inference: fw, Rejections: rej}, Pass, "429 ×30"},
		{"status=429", Facts{Inference: fw, Rejections: map[int]int{429: 3, 503: 2}}, Fail, "429 ×3, 503 ×2"},
		{"status=429,503", Facts{Inference: fw, Rejections: map[int]int{429: 3, 503: 2}}, Pass, ""},
		{"status=429", Facts{Inference: none, Requests: 2000}, Untested, "no request was rejected"},
		{"retry-after=present", Facts{Inference: fw, Rejections: rej, RetryAfter: 30}, Pass, "on 30 of 30"},
		{"retry-after=present", Facts{Inference: fw, Rejections: rej, RetryAfter: 29}, Fail, "on 29 of 30"},
		{"retry-after=absent", Facts{Inference: fw, Rejections: rej}, Pass, "on 0 of 30"},
		{"retry-after=absent", Facts{Inference: none}, Untested, ""},
		{"scope=per-key", Facts{Inference: fw, KeyTested: true}, Pass, "per_key"},
		{"scope=per_key", Facts{Inference: fw, KeyTested: true}, Pass, "per_key"},
		{"scope=global", Facts{Inference: fw, KeyTested: true}, Fail, "per_key"},
		{"scope=per-ip", Facts{Inference: fw, KeyTested: true}, Fail, "per_key"},
		{"scope=global", Facts{Inference: fw}, Untested, "not tested"},
		{"min-grade=B", Facts{Inference: fw, Grade: "A"}, Pass, "A"},
		{"min-grade=B", Facts{Inference: fw, Grade: "B"}, Pass, "B"},
		{"min-grade=B", Facts{Inference: fw, Grade: "C"}, Fail, "C"},
		{"min-grade=A+", Facts{Inference: fw, Grade: "A"}, Fail, "A"},
		{"min-grade=B", Facts{Inference: none, Grade: "N/A"}, Untested, "N/A"},
		{"min-grade=B", Facts{Inference: fw}, Untested, "not graded"},
		// An inconclusive probe tests nothing, but a rejection it saw
		// refutes "none"; an interrupted one tests nothing at all.
		{"family=none", Facts{Inference: inconclusive, Rejections: rej, Requests: 40}, Fail, "a limit (30 of 40 requests rejected)"},
		{"family=none", Facts{Inference: inconclusive, Requests: 40}, Untested, "inconclusive"},
		{"status=429", Facts{Inference: inconclusive, Rejections: rej}, Untested, "inconclusive"},
		{"retry-after=present", Facts{Inference: inconclusive, Rejections: rej, RetryAfter: 30}, Untested, "inconclusive"},
		{"min-grade=B", Facts{Inference: inconclusive, Grade: "A"}, Untested, "inconclusive"},
		{"scope=global", Facts{Inference: inconclusive, KeyTested: true}, Untested, "inconclusive"},
		{"family=none", Facts{Inference: inconclusive, Rejections: rej, Requests: 40, Interrupted: true}, Fail, "a limit (30 of 40 requests rejected)"},
		{"family=none", Facts{Inference: fw, Rejections: rej, Requests: 40, Interrupted: true}, Fail, "a limit (30 of 40 requests rejected)"},
		{"family=fixed_window", Facts{Inference: fw, Rejections: rej, Interrupted: true}, Untested, "not tested"},
		{"limit=100", Facts{Inference: fwExact, Rejections: rej, Interrupted: true}, Untested, "not tested"},
		{"family=none", Facts{Inference: none, Interrupted: true}, Untested, "not tested"},
	}
	for _, c := range cases {
		e, err := Parse(c.exp)
		if err != nil {
			t.Fatalf("%s: %v", c.exp, err)
		}
		o := Evaluate([]Expectation{e}, c.facts)[0]
		if o.Result != c.result || !strings.Contains(o.Actual, c.actual) {
			t.Errorf("%s on %+v:\n got %s %q (%s)\nwant %s %q", c.exp, c.facts.Inference.Family, o.Result, o.Actual, o.Note, c.result, c.actual)
		}
		if o.Expectation != e.Text || o.Expected == "" {
			t.Errorf("%s: outcome %+v lacks its expectation", c.exp, o)
		}
	}
}

func TestVerdict(t *testing.T) {
	p, f, u := Outcome{Result: Pass}, Outcome{Result: Fail}, Outcome{Result: Untested}
	cases := []struct {
		outs []Outcome
		want string
	}{
		{nil, Untested}, // a check that ran nothing never passes
		{[]Outcome{p, p}, Pass},
		{[]Outcome{p, u}, Untested},
		{[]Outcome{u, f, p}, Fail},
	}
	for _, c := range cases {
		if got := Verdict(c.outs); got != c.want {
			t.Errorf("Verdict(%v) = %s, want %s", c.outs, got, c.want)
		}
	}
}

func TestFactsFrom(t *testing.T) {
	obs := &probe.Observation{Results: []results.Result{
		{Seq: 1, Status: 200},
		{Seq: 2, Status: 429, Headers: map[string]string{"retry-after": "1"}},
		{Seq: 3, Status: 429},
		{Seq: 4, Status: 503, Headers: map[string]string{"retry-after": "2"}},
		{Seq: 5, Error: "timeout"},
		{Seq: 6, Status: 500},
	}}
	f := FactsFrom(obs, probe.Inference{Family: "token_bucket", Scope: "global"}, "B")
	if f.Requests != 6 || f.Rejections[429] != 2 || f.Rejections[503] != 1 || len(f.Rejections) != 2 || f.RetryAfter != 2 || !f.KeyTested || f.Grade != "B" {
		t.Errorf("FactsFrom = %+v", f)
	}
	if f := FactsFrom(nil, probe.Inference{Scope: "untested"}, ""); f.KeyTested || f.Requests != 0 {
		t.Errorf("FactsFrom(nil) = %+v", f)
	}
}

func TestMessage(t *testing.T) {
	e, _ := Parse("family=fixed_window")
	o := Evaluate([]Expectation{e}, Facts{Inference: tb(10, 0, 20, 0)})[0]
	if got := o.Message(); !strings.HasPrefix(got, "family=fixed_window: expected fixed_window, actual token_bucket") {
		t.Errorf("Message() = %q", got)
	}
}

func TestOverall(t *testing.T) {
	cases := []struct {
		in   []string
		want string
	}{
		{nil, Untested},
		{[]string{Pass}, Pass},
		{[]string{Pass, Pass}, Pass},
		{[]string{Pass, Untested}, Untested},
		{[]string{Untested, Pass}, Untested},
		{[]string{Untested, Fail, Pass}, Fail},
		{[]string{Pass, Fail}, Fail},
	}
	for _, c := range cases {
		if got := Overall(c.in); got != c.want {
			t.Errorf("Overall(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}

// A quota's partial answer (probe.Quota) tests the limit it measured and
// the rejections it saw; the window it could not wait out is untested,
// whatever the headers declare.
func TestQuotaPartialAnswerExpectations(t *testing.T) {
	inf := probe.Inference{Family: probe.Inconclusive, Reason: "capacity never came back",
		Quota: &probe.Quota{Capacity: 60, LockedS: 55, Status: 429, DeclaredWindowS: 3600}}
	f := Facts{Inference: inf, Rejections: map[int]int{429: 300}, Requests: 363}
	for _, tc := range []struct {
		exp, want string
	}{
		{"limit=60", Pass},
		{"limit=80", Fail},
		{"window=1h", Untested},
		{"rate=60/h", Untested},
		{"status=429", Pass},
		{"family=fixed_window", Untested},
	} {
		e, err := Parse(tc.exp)
		if err != nil {
			t.Fatal(err)
		}
		got := Evaluate([]Expectation{e}, f)[0]
		if got.Result != tc.want {
			t.Errorf("%s: %s (%s; %s), want %s", tc.exp, got.Result, got.Actual, got.Note, tc.want)
		}
	}
}

// The capacities expectations state, and a burst that refutes one: the
// expectation fails on the run's data, whatever the inference says.
func TestStatedCapacities(t *testing.T) {
	exps, err := ParseAll([]string{"family=fixed_window", "limit=80", "window=60s", "status=429", "burst=20"})
	if err != nil {
		t.Fatal(err)
	}
	stated, index := StatedBy(exps)
	// burst= of a fixed window states nothing (and without a rate, no
	// bucket's would either).
	if len(stated) != 1 || index[0] != 1 || stated[0].AtOnce != 81 || !stated[0].Straddle || stated[0].Window != 54*time.Second || stated[0].MayRelease {
		t.Fatalf("stated %+v at %v", stated, index)
	}
	var rs []results.Result
	for i := range 210 {
		r := results.Result{Seq: i, Phase: "burst", Sent: time.Second, Done: time.Second + time.Millisecond, Status: 429}
		if i < 97 {
			r.Status = 200
		}
		rs = append(rs, r)
	}
	obs := probe.NewObservation(time.Unix(0, 0), rs)
	outs := Evaluate(exps, FactsFrom(obs, probe.Inference{Family: probe.Inconclusive, Reason: "cut short"}, ""))
	if outs[1].Result != Fail || !strings.Contains(outs[1].Actual, "admitted 97, where limit=80 admits at most 81") {
		t.Errorf("limit=80: %+v", outs[1])
	}
	if outs[0].Result != Untested || outs[2].Result != Untested {
		t.Errorf("family and window on a cut-short run: %+v, %+v", outs[0], outs[2])
	}
}
