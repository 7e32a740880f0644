//go:build accuracy

package selftest

import (
	"context"
	"fmt"
	"github.com/ratecheck/ratecheck/probe"
	"os"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"
)

// accuracyMatrix covers every family with at least three parameter sets:
// rates 2–50/s, bursts 1–50, limits 5–100, windows 1–10 s, both window
// alignments, backend latency 0 and 20 ms, headers on and off.
var accuracyMatrix = []string{
	"builtin:none",
	"builtin:none?latency=20ms",
	"builtin:none?headers=none",
	"builtin:token_bucket?rate=2/s&burst=1",
	"builtin:token_bucket?rate=10/s&burst=20&latency=20ms",
	"builtin:token_bucket?rate=50/s&burst=50&headers=none",
	"builtin:leaky_shaping?rate=2/s&burst=3",
	"builtin:leaky_shaping?rate=10/s&burst=5&headers=none",
	"builtin:leaky_shaping?rate=25/s&burst=20&latency=20ms",
	"builtin:fixed_window?limit=5&window=1s",
	"builtin:fixed_window?limit=20&window=2s&latency=20ms",
	"builtin:fixed_window?limit=100&window=10s&headers=none",
	"builtin:fixed_window?limit=10&window=3s&align=first&headers=none",
	"builtin:fixed_window?limit=50&window=5s&align=first",
	"builtin:sliding_log?limit=5&window=1s",
	"builtin:sliding_log?limit=30&window=3s&headers=none",
	"builtin:sliding_log?limit=100&window=10s&latency=20ms",
	"builtin:sliding_counter?limit=5&window=1s",
	"builtin:sliding_counter?limit=20&window=2s&latency=20ms",
	"builtin:sliding_counter?limit=60&window=5s&headers=none",
	"builtin:concurrency?max-inflight=1&latency=50ms",
	"builtin:concurrency?max-inflight=5&latency=20ms",
	"builtin:concurrency?max-inflight=20&latency=100ms&headers=none",
	// Variants (issue #13): denied attempts that count, a pacer that
	// never rejects, a grid anchored at the server's start.
	"builtin:sliding_counter?limit=30&window=10s&count-rejected=on",
	"builtin:sliding_counter?limit=10&window=2s&count-rejected=on&headers=none",
	"builtin:sliding_counter?limit=20&window=4s&count-rejected=on&latency=20ms",
	"builtin:sliding_log?limit=10&window=2s&count-rejected=on",
	"builtin:sliding_log?limit=30&window=5s&count-rejected=on&headers=none",
	"builtin:leaky_shaping?rate=20/s&burst=unbounded",
	"builtin:leaky_shaping?rate=50/s&burst=unbounded&latency=20ms",
	"builtin:leaky_shaping?rate=12/s&burst=unbounded&headers=none",
	"builtin:sliding_counter?limit=24&window=4s&align=start",
	"builtin:sliding_counter?limit=50&window=5s&align=start&headers=none",
	// HAProxy's grid: anchored at each key's first request.
	"builtin:sliding_counter?limit=20&window=4s&align=first&count-rejected=on",
	"builtin:sliding_counter?limit=10&window=2s&align=first&headers=none",
	"builtin:sliding_counter?limit=30&window=5s&align=first&count-rejected=on&latency=20ms",
	"builtin:fixed_window?limit=20&window=3s&align=start&headers=none",
	"builtin:fixed_window?limit=10&window=2s&align=start&latency=20ms",
	// Penalties: a window every over-limit request restarts, a key shut
	// for a fixed time after a rejection. (A block longer than a window
	// makes every cycle start from a whole quota, which any window family
	// explains alike: such rows would measure a coin toss.)
	"builtin:fixed_window?limit=10&window=2s&penalty=restart",
	"builtin:fixed_window?limit=20&window=3s&penalty=restart&headers=none",
	"builtin:token_bucket?rate=5/s&burst=10&block=4s",
	"builtin:token_bucket?rate=20/s&burst=30&block=3s&headers=none",
	// Interval refill (older Envoy, bucket4j refillIntervally): tokens
	// added in clumps at a phase fixed when the server started. (Fills of
	// the whole capacity are a start-anchored fixed window in disguise.)
	"builtin:token_bucket?rate=10/s&burst=20&refill=1s",
	"builtin:token_bucket?rate=4/s&burst=12&refill=2s&headers=none",
	"builtin:token_bucket?rate=20/s&burst=30&refill=500ms&latency=20ms",
	// Two limits on one key: two zones that must both admit, and a bucket
	// with a burst pool beside it.
	"builtin:tiers?mode=all&t1=token_bucket:rate=10/s,burst=5&t2=fixed_window:limit=12,window=5s",
	"builtin:tiers?mode=either&t1=token_bucket:rate=4/s,burst=4&t2=fixed_window:limit=8,window=2s&headers=none",
}

// TestAccuracyMatrix probes the whole matrix and prints a confusion matrix,
// the parameter errors and the cost of each probe. Run it with
// `make accuracy` or `go test -tags accuracy -run Accuracy -v ./probe/selftest/`.
func TestAccuracyMatrix(t *testing.T) {
	confusion := map[string]map[string]int{}
	var rows []string
	correct, equivalent, paramsOK, confidentWrong := 0, 0, 0, 0
	var rel reliability
	var worstTime, worstReq string
	for _, spec := range accuracyMatrix {
		out, err := ProbeBuiltin(context.Background(), spec, probe.Options{})
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		truth, got := out.Truth.Algo, out.Inference.Family
		if confusion[truth] == nil {
			confusion[truth] = map[string]int{}
		}
		confusion[truth][got]++
		rel.add(out)
		if out.FamilyOK {
			correct++
		} else if out.Equivalent {
			equivalent++
		} else if out.Inference.Confidence >= 0.8 && got != probe.Inconclusive {
			confidentWrong++
		}
		if out.FamilyOK && out.ParamsOK {
			paramsOK++
		}
		bar := budgetBar(out)
		if bar != "" {
			worstTime = worstTime + " " + bar
		}
		if out.Requests > 2000 {
			worstReq += fmt.Sprintf(" %s:%d", spec, out.Requests)
		}
		rows = append(rows, fmt.Sprintf("%s\t%s\t%s\t%.2f\t%s\t%d\t%.1f s", spec, out.TruthText, out.Inference.Summary(),
			out.Inference.Confidence, strings.Join(out.ParamErrs, "; "), out.Requests, out.ElapsedS))
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "target\ttruth\tinferred\tconf\tparameter misses\trequests\ttime")
	for _, r := range rows {
		fmt.Fprintln(w, r)
	}
	w.Flush()
	fmt.Println("\nconfusion matrix (rows: truth, columns: inferred)")
	var fams []string
	fams = append(fams, limiter.Families()...)
	fams = append(fams, probe.Inconclusive)
	w = tabwriter.NewWriter(os.Stdout, 0, 0, 1, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "\t"+strings.Join(abbrev(fams), "\t")+"\t")
	truths := make([]string, 0, len(confusion))
	for k := range confusion {
		truths = append(truths, k)
	}
	sort.Strings(truths)
	for _, tr := range truths {
		line := tr
		for _, f := range fams {
			line += fmt.Sprintf("\t%d", confusion[tr][f])
		}
		fmt.Fprintln(w, line+"\t")
	}
	w.Flush()
	n := len(accuracyMatrix)
	fmt.Printf("\nfamily correct %d/%d (%.0f%%), truth reported as an equivalent %d, parameters within bars %d/%d, wrong with confidence ≥ 0.8: %d\n",
		correct, n, 100*float64(correct)/float64(n), equivalent, paramsOK, n, confidentWrong)
	if worstTime != "" {
		fmt.Println("over the time bar:", worstTime)
	}
	if worstReq != "" {
		fmt.Println("over 2,000 requests:", worstReq)
	}
	rel.print(os.Stdout)
	if float64(correct) < 0.95*float64(n) || confidentWrong > 0 {
		t.Errorf("below the bar: %d/%d correct, %d wrong with confidence ≥ 0.8", correct, n, confidentWrong)
	}
	if err := rel.bar(); err != nil {
		t.Error(err)
	}
}

// reliability tallies answers by confidence: what share of the families
// reported with a given confidence were right. Confidence means what it
// says when the share right grows with it: no wrong family at ≥ 0.8, and
// at least 98% right at ≥ 0.9. An inconclusive answer names no family and
// is counted apart.
type reliability struct {
	right, total [4]int // one per confidenceBuckets entry
	inconclusive int
}

var confidenceBuckets = [4]float64{0, 0.5, 0.8, 0.9} // lower bounds

func (r *reliability) add(o Outcome) {
	if o.Inference.Family == probe.Inconclusive {
		r.inconclusive++
		return
	}
	b := 0
	for i, lo := range confidenceBuckets {
		if o.Inference.Confidence >= lo {
			b = i
		}
	}
	r.total[b]++
	if o.FamilyOK || o.Equivalent {
		r.right[b]++
	}
}

func (r *reliability) print(w *os.File) {
	fmt.Fprintln(w, "\nreliability (confidence → share of named families that were right)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "confidence\tanswers\tright\tshare")
	for i, lo := range confidenceBuckets {
		hi := "1.00"
		if i+1 < len(confidenceBuckets) {
			hi = fmt.Sprintf("%.2f", confidenceBuckets[i+1])
		}
		share := "—"
		if r.total[i] > 0 {
			share = fmt.Sprintf("%.0f%%", 100*float64(r.right[i])/float64(r.total[i]))
		}
		fmt.Fprintf(tw, "[%.2f, %s)\t%d\t%d\t%s\n", lo, hi, r.total[i], r.right[i], share)
	}
	fmt.Fprintf(tw, "inconclusive\t%d\t\t\n", r.inconclusive)
	tw.Flush()
}

// bar is the reliability bar of issue #12.
func (r *reliability) bar() error {
	n := len(confidenceBuckets)
	if wrong := r.total[n-2] - r.right[n-2] + r.total[n-1] - r.right[n-1]; wrong > 0 {
		return fmt.Errorf("reliability: %d wrong families reported with confidence ≥ 0.8", wrong)
	}
	if t := r.total[n-1]; t > 0 && float64(r.right[n-1]) < 0.98*float64(t) {
		return fmt.Errorf("reliability: %d of %d answers at confidence ≥ 0.9 right (bar 98%%)", r.right[n-1], t)
	}
	return nil
}

// budgetBar names a probe that took longer than max(20 s, 3 W).
func budgetBar(o Outcome) string {
	limit := 20 * time.Second
	if w := o.Truth.Window; 3*w > limit {
		limit = 3 * w
	}
	if o.Truth.CountRejected || o.Truth.Restarts() || o.Truth.Block > 0 {
		// Plus the quiet periods a counting limiter forces: at most the
		// probe's whole budget.
		limit = max(limit, probe.DefaultMaxTime)
	}
	if time.Duration(o.ElapsedS*float64(time.Second)) > limit {
		return fmt.Sprintf("%s:%.1fs", o.Spec, o.ElapsedS)
	}
	return ""
}

func abbrev(fams []string) []string {
	out := make([]string, len(fams))
	for i, f := range fams {
		parts := strings.Split(f, "_")
		s := ""
		for _, p := range parts {
			s += p[:min(4, len(p))]
		}
		out[i] = s
	}
	return out
}
