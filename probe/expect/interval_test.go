package expect

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/results"
)

// window is a window family's inference as a probe reports it.
func window(family string, limit, limitErr int, w, wErr float64) probe.Inference {
	return probe.Inference{Family: family, Limit: limit, LimitErr: limitErr, WindowS: w, WindowErrS: wErr,
		Scope: "untested", Confidence: 0.92, Decisions: 100, Explained: 100}
}

func outcome(t *testing.T, exp string, inf probe.Inference) Outcome {
	t.Helper()
	return Evaluate([]Expectation{mustParse(t, exp)}, Facts{Inference: inf})[0]
}

// A wide ± confirms nothing inside it: a default probe of a 60 s fixed
// window named "45 s ± 15 s", and a 6 s one "32.5 s ± 27.5 s" (limit 30
// exact); each passed window= expectations anywhere in that range, and the
// second failed rate=3/s on the same stream while passing window=10s.
func TestWideMeasurementIsUntested(t *testing.T) {
	wide := window("fixed_window", 30, 0, 45, 15)
	wider := window("fixed_window", 30, 0, 32.5, 27.5)
	cases := []struct {
		exp    string
		inf    probe.Inference
		result string
		note   string // a substring of Note
	}{
		{"window=30s", wide, Untested, "measured 45 ± 15s is wider than the expected 30s ± 10% (default)"},
		{"window=60s", wide, Untested, "the run cannot tell"},
		{"window=45s±50%", wide, Pass, ""},       // 22.5 s to 67.5 s holds 30 s to 60 s
		{"window=2m", wide, Fail, ""},            // 108 s to 132 s: past 60 s
		{"window=10s", wider, Untested, "wider"}, // 9 s to 11 s inside 5 s to 60 s
		{"window=5s", wider, Untested, "wider"},
		{"rate=3/s", wider, Untested, "measured 0.923/s (0.5/s – 6/s) is wider than"}, // 30 per 5 s to 60 s
		{"rate=10/s", wider, Fail, ""},                                                // above 30 per 5 s
		{"limit=30", wider, Pass, ""},                                                 // exact stays exact
		{"limit=31", wider, Fail, ""},
	}
	for _, c := range cases {
		o := outcome(t, c.exp, c.inf)
		if o.Result != c.result || !strings.Contains(o.Note, c.note) {
			t.Errorf("%s on %s: got %s %q (%s), want %s with note %q", c.exp, c.inf.Summary(), o.Result, o.Actual, o.Note, c.result, c.note)
		}
	}
}

// The rate of a window family is L per W, so its interval comes from the
// window's and the limit's: an expectation of the window and one of the
// matching rate may differ in how sure they are, never in which way.
func TestWindowAndRateNeverContradict(t *testing.T) {
	infs := []probe.Inference{
		window("fixed_window", 30, 0, 32.5, 27.5),
		window("fixed_window", 30, 0, 45, 15),
		window("sliding_log", 100, 2, 60, 3),
		window("sliding_counter", 10, 0, 1.05, 0.05),
	}
	for _, inf := range infs {
		for w := 0.5; w <= 150; w += 0.5 {
			win := outcome(t, fmt.Sprintf("window=%gs", w), inf)
			rate := outcome(t, fmt.Sprintf("rate=%g/%gs", float64(inf.Limit), w), inf)
			if (win.Result == Pass && rate.Result == Fail) || (win.Result == Fail && rate.Result == Pass) {
				t.Fatalf("%s: window=%gs %s (%s) but rate=%d/%gs %s (%s)", inf.Summary(), w, win.Result, win.Actual, inf.Limit, w, rate.Result, rate.Actual)
			}
		}
	}
}

// An interrupted run tests nothing but what its data already refutes with
// certainty: a rejection refutes "no limit".
func TestInterruptedRunFailsOnlyWhatItRefutes(t *testing.T) {
	obs := &probe.Observation{Stopped: probe.StopInterrupted}
	for i := range 60 {
		status := 200
		if i >= 30 {
			status = 429
		}
		obs.Results = append(obs.Results, results.Result{Seq: i + 1, Phase: "burst", Status: status})
	}
	for _, inf := range []probe.Inference{
		{Family: probe.Inconclusive, Reason: "the probe was interrupted", Scope: "untested"},
		window("fixed_window", 30, 0, 60, 0),
	} {
		f := FactsFrom(obs, inf, "B")
		want := map[string]string{"family=none": Fail, "family=fixed_window": Untested, "limit=30": Untested,
			"limit=5": Untested, "status=429": Untested, "min-grade=C": Untested}
		for exp, result := range want {
			o := Evaluate([]Expectation{mustParse(t, exp)}, f)[0]
			if o.Result != result {
				t.Errorf("%s after an interrupted run (%s): %s %q (%s), want %s", exp, inf.Family, o.Result, o.Actual, o.Note, result)
			}
		}
		if o := Evaluate([]Expectation{mustParse(t, "family=none")}, f)[0]; o.Actual != "a limit (30 of 60 requests rejected)" {
			t.Errorf("family=none: actual %q", o.Actual)
		}
	}
}

func mustParse(t *testing.T, s string) Expectation {
	t.Helper()
	e, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
