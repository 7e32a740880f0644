package report

import (
	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe"
)

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
