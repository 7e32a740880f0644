package report

import (
	"fmt"
	"io"

	"github.com/ratecheck/ratecheck/probe"
)

// Inference prints a probe's verdict: the summary line, a table of
// parameters and confidence, and the evidence.
func Inference(w io.Writer, target string, inf probe.Inference, requests int, elapsedS float64, notes []string) {
	fmt.Fprintf(w, "%s\n  %s\n\n", target, inf.Summary())
	rows := [][]string{
		{"family", inf.Family},
		{"confidence", fmt.Sprintf("%.2f", inf.Confidence)},
		{"scope", inf.Scope},
		{"decisions explained", fmt.Sprintf("%d of %d", inf.Explained, inf.Decisions)},
		{"requests / time", fmt.Sprintf("%d in %.1f s", requests, elapsedS)},
	}
	if q := inf.Quota; q != nil {
		rows = append(rows, []string{"quota (partial)", q.Text()})
	}
	if b := inf.Bypass; b != nil {
		rows = append(rows, []string{"bypass", b.Summary()})
	}
	if inf.Failures != nil {
		rows = append(rows, []string{"failed", failuresLine(inf.Failures)})
	}
	for _, a := range inf.Alternatives {
		tag := ""
		if a.Equivalent {
			tag = " (equivalent)"
		}
		rows = append(rows, []string{"alternative", fmt.Sprintf("%s explains %s%s", a.Family, a.ExplainedText(), tag)})
	}
	_ = Table(w, []string{"inference", "value"}, rows)
	fmt.Fprintln(w, "evidence:")
	for _, e := range inf.Evidence {
		fmt.Fprintln(w, "  - "+e)
	}
	if b := inf.Bypass; b != nil {
		fmt.Fprintln(w, "bypass trials (with the key exhausted):")
		for _, r := range b.Trials {
			fmt.Fprintln(w, "  "+r.Line())
		}
	}
	for _, n := range notes {
		fmt.Fprintln(w, "note: "+n)
	}
}

// failuresLine is the requests that failed (no answer, or a server
// error), for text and HTML.
func failuresLine(f *probe.Failures) string {
	return fmt.Sprintf("%d of %d requests (first at %.2f s: %s)", f.Failed, f.Of, f.FirstAtS, f.FirstError)
}
