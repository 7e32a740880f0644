package runner

import (
	"testing"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/results"
)

// A concluded attack shows its report and grade; a cut-short one no grade
// but why it stopped; one that tested nothing neither, its run saying why.
func TestComparedAttack(t *testing.T) {
	g := &grade.Report{Letter: "A"}
	res := &attack.RunResult{Concluded: true, Results: []*results.Result{{Seq: 1, Status: 200}}, Report: results.Report{Profile: "burst", Notes: []string{"n"}}}
	ct := comparedAttack("builtin:x", "http://u/", "burst", "r.jsonl", res, g)
	if ct.Report == nil || ct.Grade != g || ct.Run.Grade != g || ct.Stopped != "" || ct.Results != "r.jsonl" || len(ct.Run.Results) != 1 || ct.Notes != nil {
		t.Errorf("concluded: %+v", ct)
	}
	res.Stopped = attack.StopInterrupted
	if ct := comparedAttack("builtin:x", "http://u/", "burst", "r.jsonl", res, nil); ct.Grade != nil || ct.Stopped != "interrupted" || ct.Run.Complete {
		t.Errorf("interrupted: %+v", ct)
	}
	res.Stopped, res.Untested = "", "no answer"
	if ct := comparedAttack("builtin:x", "http://u/", "burst", "r.jsonl", res, g); ct.Report != nil || ct.Grade != nil || ct.Run.Error != "no answer" || len(ct.Notes) != 1 {
		t.Errorf("untested: %+v", ct)
	}
}
