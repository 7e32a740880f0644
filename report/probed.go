package report

import (
	"io"

	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe"
)

// ProbeOutput is probe's -o json document (and its --json file).
type ProbeOutput struct {
	Target    string          `json:"target"`
	Inference probe.Inference `json:"inference"`
	Requests  int             `json:"requests"`
	ElapsedS  float64         `json:"elapsed_s"`
	// Stopped says why the probe ended early ("interrupted"); absent when
	// it ran to its end.
	Stopped string `json:"stopped,omitempty"`
	// Budget is the run's: what it started with, what it could grow to,
	// and what it grew to and why.
	Budget  probe.Budget  `json:"budget"`
	Notes   []string      `json:"notes,omitempty"`
	Results string        `json:"results_file"`
	Grade   *grade.Report `json:"grade,omitempty"`
}

// NewProbeOutput is the document of a probe of target, res, graded g (nil
// when it was not).
func NewProbeOutput(target string, res *probe.Result, g *grade.Report) ProbeOutput {
	return ProbeOutput{Target: target, Inference: res.Inference, Requests: len(res.Observation.Results), ElapsedS: res.Elapsed.Seconds(),
		Stopped: res.Observation.Stopped, Budget: res.Observation.Budget, Notes: res.Notes, Results: res.ResultsFile, Grade: g}
}

// ProbeText prints the probe's answer: the inference, then the grade.
func ProbeText(w io.Writer, out ProbeOutput) {
	if out.Stopped != "" {
		Interrupted(w, out.Stopped)
	}
	Inference(w, out.Target, out.Inference, out.Requests, out.ElapsedS, out.Notes)
	if out.Grade != nil {
		Grade(w, *out.Grade)
	}
}
