package selftest

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ratecheck/ratecheck/internal/testenv"
	"github.com/ratecheck/ratecheck/probe"
)

// demoEvidence is what a variant's demo row must tell its user, the fact
// that the variant's finding rests on.
var demoEvidence = map[string]string{
	"builtin:sliding_counter?limit=10&window=2s&count-rejected=on":                                 "every denied attempt counts",
	"builtin:token_bucket?rate=10/s&burst=20&refill=1s":                                            "capacity returns in clumps of 10 every ",
	"builtin:leaky_shaping?rate=10/s&burst=10&delay=4":                                             "burst=10 delay=4: of a burst after idle the first 5 pass at once",
	"builtin:tiers?mode=either&t1=token_bucket:rate=4/s,burst=4&t2=fixed_window:limit=8,window=2s": "two limits on one key",
}

// One built-in target per family, probed end to end: the family and its
// parameters must come out within the harness's bars, with confidence of
// at least 0.3. (The full matrix is
// `go test -tags accuracy ./probe/selftest/`.)
func TestProbeNamesEveryFamily(t *testing.T) {
	for spec := range demoEvidence {
		if !slices.Contains(DemoTargets(), spec) {
			t.Fatalf("demoEvidence names %s, which is not a demo target", spec)
		}
	}
	for _, spec := range DemoTargets() {
		// The run's results stream, kept when the test fails and
		// $RATECHECK_KEEP asks (to re-infer it with `ratecheck report`).
		path := filepath.Join(t.TempDir(), testenv.KeepName(spec)+".jsonl")
		testenv.KeepOnFailure(t, path)
		out, err := ProbeBuiltin(context.Background(), spec, probe.Options{ResultsFile: path})
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if !out.FamilyOK || !out.ParamsOK {
			t.Errorf("%s: inferred %q (confidence %.2f), truth %s; param errors %v\nevidence %v",
				spec, out.Inference.Summary(), out.Inference.Confidence, out.TruthText, out.ParamErrs, out.Inference.Evidence)
			continue
		}
		if want, ok := demoEvidence[spec]; ok && !strings.Contains(strings.Join(out.Inference.Evidence, "\n"), want) {
			t.Errorf("%s: named right, but no evidence %q: %q", spec, want, out.Inference.Evidence)
		}
		// Right, and not unsure beyond what a loaded machine does to a
		// probe of a few hundred decisions: a window every knock restarts
		// is probed by knocking slowly, and four late answers of 174 on a
		// CI machine cost it a quarter of its confidence (0.45). The
		// harness's reliability table judges what confidence means.
		if out.Inference.Confidence < 0.3 {
			t.Errorf("%s: right family but confidence %.2f (%d of %d explained); alternatives %+v\nevidence %v",
				spec, out.Inference.Confidence, out.Inference.Explained, out.Inference.Decisions, out.Inference.Alternatives, out.Inference.Evidence)
		}
	}
}

// Without any rate-limit headers the inference works from behaviour alone.
func TestProbeWithoutHeaders(t *testing.T) {
	for _, spec := range []string{
		"builtin:token_bucket?rate=5/s&burst=10&headers=none",
		"builtin:fixed_window?limit=10&window=1s&headers=none&align=first",
	} {
		out, err := ProbeBuiltin(context.Background(), spec, probe.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !out.FamilyOK || !out.ParamsOK {
			t.Errorf("%s: inferred %q, truth %s, errors %v\nevidence %v", spec, out.Inference.Summary(), out.TruthText, out.ParamErrs, out.Inference.Evidence)
		}
	}
}
