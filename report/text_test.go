package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ratecheck/ratecheck/results"
)

// A live attack's text is the profile's table and verdict, under the
// banner only when a signal cut it short.
func TestAttackText(t *testing.T) {
	rep := results.Report{Profile: "burst", Rows: [][]string{{"admitted", "20"}}, Verdict: "verdict: a burst of 20", Notes: []string{"n"}}
	for stopped, banner := range map[string]bool{"": false, "time budget": false, results.Interrupted: true} {
		var b bytes.Buffer
		if err := AttackText(&b, rep, stopped); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if strings.HasPrefix(out, interruptedBanner) != banner || !strings.Contains(out, "BURST") || !strings.Contains(out, "admitted") ||
			!strings.HasSuffix(out, "verdict: a burst of 20\nnote: n\n") {
			t.Errorf("stopped %q:\n%s", stopped, out)
		}
	}
}
