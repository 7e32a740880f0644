package report

import (
	"fmt"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/results"
)

// ComparedAttack is a target's entry from an attack profile's run, res,
// streamed at path, and its grade g (nil for a cut-short run, which then
// says why it stopped). A run that could not test the target keeps its
// figures and notes only, and its run says why; g is not shown.
func ComparedAttack(spec, url, profile, path string, res *attack.RunResult, g *grade.Report) ComparedTarget {
	notes := res.Report.Notes
	if res.StreamErr != nil {
		notes = append(notes, fmt.Sprintf("writing %s: %v", path, res.StreamErr))
	}
	ct := ComparedTarget{Target: spec, Results: path, Requests: res.Summary.Requests, ElapsedS: res.Elapsed.Seconds(), Statuses: res.Summary.Statuses}
	rs := make([]results.Result, len(res.Results))
	for i, r := range res.Results {
		rs[i] = *r
	}
	rep := res.Report
	rep.Notes = notes
	run := AttackRun(spec, url, profile, res.Start, rs, &rep, res.Elapsed.Seconds(), notes)
	run.ResultsFile, run.Stopped, run.Complete = path, string(res.Stopped), res.Stopped == ""
	ct.Run = &run
	if !res.Concluded || res.Untested != "" {
		ct.Notes = notes
		run.Error = res.Untested
		return ct
	}
	ct.Report = &rep
	ct.Grade, run.Grade = g, g
	if g == nil {
		ct.Stopped = string(res.Stopped)
	}
	return ct
}

// ComparedProbe is a target's entry from a probe of it, res, streamed at
// path and graded g (nil when it was not).
func ComparedProbe(spec, url, path string, res *probe.Result, g *grade.Report) ComparedTarget {
	s := res.Observation
	statuses := map[int]int{}
	for i := range s.Results {
		if s.Results[i].Error == "" {
			statuses[s.Results[i].Status]++
		}
	}
	run := ProbeRun(spec, url, res, g)
	return ComparedTarget{Target: spec, Results: path, Requests: len(s.Results), ElapsedS: res.Elapsed.Seconds(), Statuses: statuses, Notes: res.Notes,
		Inference: &res.Inference, Grade: g, Stopped: s.Stopped, Run: &run}
}
