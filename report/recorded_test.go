package report

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/ratecheck/ratecheck/results"
)

// A document of streams read back names the command and the experiment
// they share, "report" and "mixed" where they differ.
func TestRecordedDocumentSummarisesTheStreams(t *testing.T) {
	probeH := results.StreamHeader{Command: "probe"}
	checkH := results.StreamHeader{Command: "check"}
	burstH := results.StreamHeader{Command: "attack", Profile: "burst"}
	for _, c := range []struct {
		hs                  []results.StreamHeader
		command, experiment string
	}{
		{[]results.StreamHeader{probeH}, "probe", "probe"},
		{[]results.StreamHeader{probeH, checkH}, "report", "probe"},
		{[]results.StreamHeader{burstH, burstH}, "attack", "burst"},
		{[]results.StreamHeader{burstH, {Command: "compare", Profile: "probe"}}, "report", "mixed"},
		{[]results.StreamHeader{{Command: "compare", Profile: "steady"}, {Command: "compare", Profile: "probe"}}, "compare", "mixed"},
	} {
		d := RecordedDocument("v", c.hs)
		if d.Command != c.command || d.Experiment != c.experiment || d.Version != "v" {
			t.Errorf("%+v: %s/%s, want %s/%s", c.hs, d.Command, d.Experiment, c.command, c.experiment)
		}
	}
}

// A probe that failed keeps what its stream recorded; with no stream, the
// run says only why.
func TestFailedProbeRunKeepsItsStream(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.jsonl")
	s, err := results.CreateStream(path, results.StreamHeader{Command: "probe", URL: "http://127.0.0.1:1/"})
	if err != nil {
		t.Fatal(err)
	}
	s.Add(&results.Result{Seq: 2, Sent: 20, Status: 200})
	s.Add(&results.Result{Seq: 1, Sent: 10, Status: 429})
	if err := s.Close(nil, 0); err != nil {
		t.Fatal(err)
	}
	r := FailedProbeRun("builtin:x", path, errors.New("unreachable"))
	if r.Error != "unreachable" || r.Kind != "probe" || r.URL != "http://127.0.0.1:1/" || len(r.Results) != 2 || r.Results[0].Seq != 1 || r.Summary.Requests != 2 {
		t.Errorf("%+v", r)
	}
	r = FailedProbeRun("builtin:x", filepath.Join(t.TempDir(), "none.jsonl"), errors.New("refused"))
	if r.Error != "refused" || r.Results != nil || r.ResultsFile == "" {
		t.Errorf("%+v", r)
	}
}
