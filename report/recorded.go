package report

import "github.com/ratecheck/ratecheck/results"

// RecordedDocument is the document of runs read back from their streams
// (ratecheck report), summarised from the streams' headers hs: the command
// that made them all, or "report" when they differ, and the experiment
// they all ran, or "mixed".
func RecordedDocument(version string, hs []results.StreamHeader, runs ...Run) Document {
	command, experiment := hs[0].Command, streamExperiment(hs[0])
	for _, h := range hs[1:] {
		if h.Command != command {
			command = "report"
		}
		if streamExperiment(h) != experiment {
			experiment = "mixed"
		}
	}
	return NewDocument(version, command, experiment, runs...)
}

func streamExperiment(h results.StreamHeader) string {
	if IsProbeStream(h) {
		return "probe"
	}
	return h.Profile
}

// FailedProbeRun is the run of a probe that could not test its target
// (failed says why), with whatever its results stream at path recorded
// before: the requests, their summary, the start and the URL.
func FailedProbeRun(spec, path string, failed error) Run {
	run := Run{Target: spec, Kind: "probe", Profile: "probe", ResultsFile: path, Error: failed.Error()}
	if rec, err := results.ReadStreamFile(path); err == nil {
		run.Results = SortResults(rec.Results)
		run.Summary = Summarize(run.Results)
		run.Start, run.URL = rec.Header.Start, rec.Header.URL
	}
	return run
}
