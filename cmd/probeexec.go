package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/targets/launch"
)

// probeRun is one probe experiment carried out: what 'probe' does, for
// the commands that build on it (check).
type probeRun struct {
	Spec, URL, Path string
	Obs             *probe.Observation
	Inf             probe.Inference
	Grade           grade.Report
	Notes           []string
	ElapsedS        float64
}

// execProbe runs the probe plan against an opened target exactly as 'probe'
// does — results stream at path, the plan with the request flags' budget,
// then inference and grading — with extra sinks (progress) on the engine.
// An unreachable target is exit 3; a stream that cannot be created exit 2.
func execProbe(ctx context.Context, stderr io.Writer, rf *requestFlags, maxTime time.Duration, command string, tgt *launch.Target, path string, sinks ...func(*attack.Result)) (*probeRun, error) {
	req, err := rf.request(tgt.URL)
	if err != nil {
		return nil, err
	}
	start := time.Now() // offset 0 of the run and the header's wall clock
	stream, err := attack.CreateStream(path, attack.StreamHeader{Command: command, Target: tgt.Spec, URL: tgt.URL, Profile: "probe", Start: start})
	if err != nil {
		return nil, usageErr("%v", err)
	}
	col := attack.NewCollector(true)
	opt := rf.options()
	opt.MaxDuration = maxTime + 10*time.Second // the plan stops itself; this is the hard stop
	eng := attack.New(req, opt, append([]func(*attack.Result){stream.Add, col.Add}, sinks...)...)
	runCtx := eng.BeginAt(ctx, start)
	obs, runErr := probe.Run(runCtx, eng, col, probe.Options{MaxTime: maxTime, MaxRequests: rf.maxRequests, ScopeKey: rf.keyHeader != ""})
	eng.Finish()
	notes := eng.Notes()
	if obs != nil {
		notes = append(notes, obs.Notes...)
	}
	if ctx.Err() != nil {
		notes = append(notes, "interrupted: the results so far are in "+path)
	}
	if err := stream.Close(notes, eng.Now()); err != nil {
		fmt.Fprintf(stderr, "ratecheck: writing %s: %v\n", path, err)
	}
	fmt.Fprintf(stderr, "results: %s\n", path)
	if obs == nil || (runErr != nil && errors.Is(runErr, probe.ErrUnreachable)) {
		if runErr == nil {
			runErr = errors.New("the probe returned no observation")
		}
		return nil, exitWith(ExitUntested, fmt.Errorf("%s: %w", tgt.Spec, runErr))
	}
	if runErr != nil {
		notes = append(notes, runErr.Error())
	}
	inf := probe.Infer(obs)
	return &probeRun{Spec: tgt.Spec, URL: tgt.URL, Path: path, Obs: obs, Inf: inf, Grade: grade.Grade(obs, inf),
		Notes: notes, ElapsedS: eng.Now().Seconds()}, nil
}
