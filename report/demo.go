package report

import (
	"fmt"
	"io"

	"github.com/ratecheck/ratecheck/probe/selftest"
)

// Demo prints the truth beside the inference for each built-in target.
func Demo(w io.Writer, outcomes []selftest.Outcome) {
	rows := make([][]string, 0, len(outcomes))
	right := 0
	for _, o := range outcomes {
		verdict := "✓"
		switch {
		case !o.FamilyOK:
			verdict = "✗ family"
		case !o.ParamsOK:
			verdict = "✗ " + fmt.Sprint(o.ParamErrs)
		default:
			right++
		}
		rows = append(rows, []string{o.TruthText, o.Inference.Summary(), fmt.Sprintf("%.2f", o.Inference.Confidence),
			fmt.Sprintf("%d / %.1f s", o.Requests, o.ElapsedS), verdict})
	}
	_ = Table(w, []string{"truth", "inferred", "confidence", "requests / time", "ok"}, rows)
	fmt.Fprintf(w, "%d of %d limiters named with their parameters from behaviour alone\n", right, len(outcomes))
}
