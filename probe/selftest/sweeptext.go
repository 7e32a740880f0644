package selftest

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// WriteSweep prints a sweep's figures as text: accuracy, the reliability
// table, what stayed inconclusive and why, durations, the confusion
// matrix, and every run to look at with the command that replays it.
func WriteSweep(w io.Writer, rep *SweepReport) {
	fmt.Fprintf(w, "simulation sweep: %d probes (seed %d), %d judged (not interrupted, no server fault)\n",
		rep.N, rep.Seed, rep.Judged)
	fmt.Fprintf(w, "  family right (of named)        %s\n", rep.Family)
	fmt.Fprintf(w, "  parameters right (family right) %s\n", rep.Params)
	fmt.Fprintf(w, "  right at confidence >= %.1f     %s\n", confidentBar, rep.Confident)
	fmt.Fprintf(w, "  inconclusive (of judged)       %s\n", rep.Inconclusive)
	fmt.Fprintf(w, "  median probe %.1f s; median probe / window %.2f\n", rep.MedianS, rep.MedianOverW)
	fmt.Fprintln(w, "reliability (confidence -> share right):")
	for _, b := range rep.Reliability {
		fmt.Fprintf(w, "  [%.1f, %.1f)  %s\n", b.Lo, b.Hi, b.Right)
	}
	if len(rep.Reasons) > 0 {
		fmt.Fprintln(w, "inconclusive, why:")
		for _, k := range sortedByCount(rep.Reasons) {
			fmt.Fprintf(w, "  %4d  %s\n", rep.Reasons[k], k)
		}
	}
	fmt.Fprintln(w, "confusion (truth -> inferred):")
	for _, truth := range sortedKeys(rep.Confusion) {
		row := rep.Confusion[truth]
		var cells []string
		for _, inf := range sortedKeys(row) {
			cells = append(cells, fmt.Sprintf("%s %d", inf, row[inf]))
		}
		fmt.Fprintf(w, "  %-16s %s\n", truth, strings.Join(cells, ", "))
	}
	for _, r := range rep.WrongConfident {
		fmt.Fprintf(w, "WRONG at %.2f: %s named %s\n  replay: %s\n", r.Outcome.Inference.Confidence, r.Outcome.TruthText, r.Outcome.Inference.Summary(), r.Replay)
	}
	for _, r := range rep.Violations {
		fmt.Fprintf(w, "INVARIANT: %s\n  replay: %s\n", strings.Join(r.Violations, "; "), r.Replay)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedByCount(m map[string]int) []string {
	keys := sortedKeys(m)
	sort.SliceStable(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	return keys
}
