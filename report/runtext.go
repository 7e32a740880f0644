package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe/expect"
)

// CheckRun prints one endpoint's verdict, grade and expectations.
func CheckRun(w io.Writer, r *Run) {
	head := r.Target
	if r.Name != "" {
		head = r.Name + ": " + r.Target
	}
	fmt.Fprintln(w, head)
	if r.Stopped != "" {
		Interrupted(w, r.Stopped)
	}
	switch {
	case r.Error != "":
		fmt.Fprintf(w, "  could not be tested: %s\n", r.Error)
	case r.Inference != nil:
		fmt.Fprintf(w, "  %s  (confidence %.2f; %d requests in %.1f s)\n", r.Inference.Summary(), r.Inference.Confidence, r.Summary.Requests, r.ElapsedS)
	}
	if g := r.Grade; g != nil {
		if g.Letter == grade.NotGraded {
			fmt.Fprintf(w, "  grade: %s (%s)\n", g.Letter, g.Note)
		} else {
			fmt.Fprintf(w, "  grade: %s (score %d/100, rubric v%s)\n", g.Letter, g.Score, g.RubricVersion)
		}
		for _, cp := range g.Caps {
			fmt.Fprintf(w, "    capped at %s\n", cp)
		}
	}
	Expectations(w, r)
	fmt.Fprintln(w)
}

// Expectations prints a run's expectations as a table and a tally.
func Expectations(w io.Writer, r *Run) {
	rows := make([][]string, 0, len(r.Expectations))
	for _, o := range r.Expectations {
		actual := o.Actual
		if o.Note != "" {
			actual += " (" + o.Note + ")"
		}
		rows = append(rows, []string{resultWord(o.Result), o.Expectation, o.Expected, actual})
	}
	_ = Table(w, []string{"result", "expectation", "expected", "actual"}, rows)
	p, fl, u := expect.Tally(r.Expectations)
	fmt.Fprintf(w, "%s: %d passed, %d failed, %d untested\n", strings.ToUpper(r.Outcome), p, fl, u)
}

func resultWord(r string) string {
	switch r {
	case expect.Pass:
		return "✓ pass"
	case expect.Fail:
		return "✗ FAIL"
	}
	return "? untested"
}

// RunText prints one run as the live command would, as far as the
// stream allows.
func RunText(w io.Writer, r *Run) {
	if r.Stopped != "" {
		Interrupted(w, r.Stopped)
	}
	if len(r.Shards) > 0 {
		shardsText(w, r)
	}
	if r.Inference != nil {
		Inference(w, r.Target, *r.Inference, r.Summary.Requests, r.ElapsedS, r.Notes)
		if r.Grade != nil {
			Grade(w, *r.Grade)
		}
	} else if len(r.Rows) > 0 { // the profile's own table, stored by the live run
		fmt.Fprintf(w, "%s\n", r.Target)
		_ = Table(w, []string{r.Profile, "value"}, r.Rows)
		Verdict(w, r.Verdict, r.Notes)
	} else {
		fmt.Fprintf(w, "%s\n", r.Target)
		s := r.Summary
		rows := [][]string{
			{"profile", r.Profile},
			{"requests", fmt.Sprintf("%d in %.1f s", s.Requests, r.ElapsedS)},
			{"admitted", fmt.Sprint(s.Admitted)},
			{"rejected", fmt.Sprint(s.Rejected)},
			{"errors", fmt.Sprint(s.Errors)},
			{"latency p50 / p99 / max", fmt.Sprintf("%s / %s / %s", durMS(s.Latency.P50), durMS(s.Latency.P99), durMS(s.Latency.Max))},
		}
		_ = Table(w, []string{"results", "value"}, rows)
		Verdict(w, r.Verdict, r.Notes)
	}
	if len(r.Expectations) > 0 {
		Expectations(w, r)
	}
	fmt.Fprintln(w)
}

func durMS(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// shardsText is a merged run's table of shards.
func shardsText(w io.Writer, r *Run) {
	fmt.Fprintf(w, "run %s: %d shards, told to start at %s; they began within %s of each other\n",
		r.RunID, len(r.Shards), r.StartAt.UTC().Format(time.RFC3339Nano), durMS(r.StartSpread))
	rows := make([][]string, len(r.Shards))
	for i, s := range r.Shards {
		state := "complete"
		if !s.Complete {
			state = "interrupted"
		}
		rows[i] = []string{s.Shard.String(), orDash(s.Host), s.BeganAt.UTC().Format("15:04:05.000000"), "+" + durMS(s.Late),
			fmt.Sprint(s.Requests), state, s.File}
	}
	_ = Table(w, []string{"shard", "host", "began at (UTC)", "after start", "requests", "stream", "file"}, rows)
}
