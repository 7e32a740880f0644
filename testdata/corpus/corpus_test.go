package corpus

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/internal/testenv"
	"github.com/ratecheck/ratecheck/probe"
)

// tossUp: a verdict under this confidence claims no more than a coin toss.
const tossUp = 0.5

type row struct {
	e   Entry
	inf probe.Inference
	j   Judgement
	el  time.Duration
	n   int
	err error
}

// TestCorpus probes every entry of the corpus one after another — they
// judge timing, so never side by side — and prints truth against inference
// (go test -v shows the table).
func TestCorpus(t *testing.T) {
	var rows []row
	for _, e := range Entries() {
		t.Run(strings.NewReplacer(" ", "_", "/", "-").Replace(e.Name), func(t *testing.T) {
			if strings.HasPrefix(e.Source, "haproxy") {
				testenv.Need(t, "haproxy")
			}
			r := probeEntry(t, e)
			rows = append(rows, r)
			if r.err != nil {
				t.Fatalf("%s: %v", e.Name, r.err)
			}
			// The engine stops sending at the budget; the requests still in
			// flight are then cancelled and reaped, which on a loaded 2-core
			// machine takes a few scheduler slices.
			const windDown = 250 * time.Millisecond
			if r.el > e.MaxTime+windDown {
				t.Errorf("%s: the probe took %v, over its budget %v", e.Name, r.el.Round(time.Millisecond), e.MaxTime)
			}
			// An entry inside the model space named wrong fails by itself
			// when the probe claimed its answer more likely than not; an
			// answer it called a toss-up (a margin of a decision or two,
			// which a loaded machine's timing can move) counts against the
			// corpus's bar below instead. HAProxy's http_req_rate, a
			// counting sliding counter whose two trace steps spent the
			// budget before a deciding experiment could run, was named a
			// fixed window at 0.48 in a CI run (and at 0.50 in the next);
			// its trace now stops after one step (probe/plan's
			// trace_one_step.go) and it was named right at 0.50–0.91.
			wrongInside := e.Truth.Outside == "" && r.j.Verdict != NamedRight && r.j.Verdict != ParamsOff
			switch {
			case wrongInside && r.inf.Confidence < tossUp:
				t.Logf("%s is inside the probe's model space (%s) and was named wrong, unsure (confidence %.2f < %.2f; counted against the bar): %s (%s)",
					e.Name, e.Truth, r.inf.Confidence, tossUp, Inferred(r.inf), detail(r))
			case wrongInside:
				t.Errorf("%s is inside the probe's model space (%s) and its family must be named right: got %s, %s, confidence %.2f (%s)",
					e.Name, e.Truth, r.j.Verdict, Inferred(r.inf), r.inf.Confidence, detail(r))
			case r.j.Verdict == ParamsOff:
				// Counted below: the bar is on the corpus as a whole.
				t.Logf("%s: family right, parameters off: %s (%s)", e.Name, Inferred(r.inf), detail(r))
			case r.j.Sure():
				t.Errorf("%s (%s; outside the model space: %s) was named wrong with confidence %.2f ≥ %.1f: %s (%s)",
					e.Name, e.Truth, e.Truth.Outside, r.inf.Confidence, SureConfidence, Inferred(r.inf), detail(r))
			}
		})
	}
	t.Log("\n" + table(rows))
	// Each miss's account again, after the table: CI keeps the tail of a
	// failing run's output, where the subtests' messages are long gone.
	for _, r := range rows {
		if r.err == nil && r.j.Verdict != NamedRight {
			t.Logf("%s (%s): %s", r.e.Name, r.j.Verdict, detail(r))
		}
	}
	// Family right for every entry inside the model space the probe was
	// not unsure of (above), and family and parameters (and a grid's
	// alignment) right for at least nine in ten of them.
	inside, right := 0, 0
	for _, r := range rows {
		if r.e.Truth.Outside == "" {
			inside++
			if r.j.Verdict == NamedRight {
				right++
			}
		}
	}
	if 10*right < 9*inside {
		t.Errorf("parameters within the bars for %d of %d entries inside the model space, under nine in ten", right, inside)
	}
	testenv.NoChildrenLeft(t)
}

// detail is what a failure message adds: the parameters that missed, and
// the probe's own account of what it saw.
func detail(r row) string {
	var parts []string
	if len(r.j.ParamErrs) > 0 {
		parts = append(parts, strings.Join(r.j.ParamErrs, "; "))
	}
	if r.inf.Reason != "" {
		parts = append(parts, r.inf.Reason)
	}
	parts = append(parts, r.inf.Summary())
	parts = append(parts, r.inf.Evidence...)
	return strings.Join(parts, "; ")
}

// probeEntry starts an entry, probes it within its budget, stops it.
func probeEntry(t *testing.T, e Entry) row {
	r := row{e: e}
	ctx, cancel := context.WithTimeout(context.Background(), e.MaxTime+30*time.Second)
	defer cancel()
	url, stop, err := e.Start(ctx)
	if err != nil {
		r.err = fmt.Errorf("starting: %w", err)
		return r
	}
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("%s: stopping: %v", e.Name, err)
		}
	}()
	req, err := attack.NewRequest("GET", url, nil, "")
	if err != nil {
		r.err = err
		return r
	}
	// CORPUS_RESULTS=DIR keeps each probe's results stream there, for
	// `ratecheck report` to re-infer and chart.
	var results string
	if dir := os.Getenv("CORPUS_RESULTS"); dir != "" {
		results = filepath.Join(dir, strings.NewReplacer(" ", "_", "/", "-").Replace(e.Name)+".jsonl")
	}
	res, err := probe.Run(ctx, req, probe.Options{MaxTime: e.MaxTime, Target: e.Name, ResultsFile: results})
	if err != nil {
		r.err = err
		return r
	}
	r.inf, r.el, r.n = res.Inference, res.Elapsed, len(res.Observation.Results)
	r.j = Judge(e.Truth, r.inf)
	return r
}

func table(rows []row) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "entry\tsource\ttruth\tinferred\tconfidence\ttime\trequests\tverdict")
	right, families := 0, 0
	for _, r := range rows {
		if r.err != nil {
			fmt.Fprintf(w, "%s\t%s\t%s\t(error: %v)\t\t\t\t\n", r.e.Name, r.e.Source, r.e.Truth, r.err)
			continue
		}
		if r.j.Verdict == NamedRight {
			right++
		}
		if r.j.FamilyOK {
			families++
		}
		v := r.j.Verdict
		if r.e.Truth.Outside != "" {
			v += " [outside: " + r.e.Truth.Outside + "]"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%.2f\t%.1fs\t%d\t%s\n", r.e.Name, r.e.Source, r.e.Truth, Inferred(r.inf), r.inf.Confidence, r.el.Seconds(), r.n, v)
	}
	w.Flush()
	fmt.Fprintf(&b, "%d of %d named right (family and parameters within the selftest bars); family right for %d of %d\n", right, len(rows), families, len(rows))
	return b.String()
}
