package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/ratecheck/ratecheck/grade"
)

// Grade prints a probe's grade: the letter and score, each cap that held the
// letter down, a table of the checks, then what every check that did not
// pass expected, saw, which rule it applies and which requests show it.
func Grade(w io.Writer, g grade.Report) {
	if g.Letter == grade.NotGraded {
		fmt.Fprintf(w, "\ngrade: %s  (rubric v%s): %s\n", g.Letter, g.RubricVersion, g.Note)
	} else {
		fmt.Fprintf(w, "\ngrade: %s  (score %d/100, rubric v%s)\n", g.Letter, g.Score, g.RubricVersion)
	}
	for _, c := range g.Caps {
		fmt.Fprintln(w, "  capped at "+c)
	}
	rows := make([][]string, 0, len(g.Checks))
	for _, c := range g.Checks {
		rows = append(rows, []string{c.ID, strings.ToUpper(c.Outcome), shorten(c.Actual, 72)})
	}
	_ = Table(w, []string{"check", "outcome", "seen"}, rows)
	for _, c := range g.Checks {
		if c.Outcome == grade.Pass {
			continue
		}
		fmt.Fprintf(w, "%s %s — %s [%s]\n", strings.ToUpper(c.Outcome), c.ID, c.Title, c.Source)
		if c.Outcome == grade.Skip {
			fmt.Fprintln(w, "  not exercised: "+c.Actual)
			continue
		}
		fmt.Fprintln(w, "  expected: "+c.Expected)
		fmt.Fprintln(w, "  actual:   "+c.Actual)
		if c.Hint != "" {
			fmt.Fprintln(w, "  hint:     "+c.Hint)
		}
		if len(c.Seqs) > 0 {
			s := make([]string, len(c.Seqs))
			for i, n := range c.Seqs {
				s[i] = fmt.Sprint(n)
			}
			fmt.Fprintln(w, "  requests: seq "+strings.Join(s, ", "))
		}
	}
}

// shorten cuts s to n runes at a word boundary, marking the cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := string(r[:n-1])
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return cut + "…"
}
