package attack

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// RunOptions say what a run sends, how far it may go and where its results
// go.
type RunOptions struct {
	Options // budgets, per-request timeout, the connection limit

	// Request is what every shot sends (see NewRequest). Required.
	Request *Request
	// Out, when set, is the results stream (compact for a name ending .rcs,
	// else JSON Lines; see results.CreateStream):
	// created before the first request, each result written as it
	// completes, ended with the profile's outcome and the notes.
	Out string
	// Header describes the run in the stream's header (Command, Target,
	// Options); Run fills in URL, Profile and Start.
	Header results.StreamHeader
	// Sinks also receive every result as it arrives (a progress line).
	// Each must be safe for concurrent use.
	Sinks []func(*results.Result)
	// KeepResults keeps every result in RunResult.Results. Steady, whose
	// runs can be huge, otherwise keeps only its aggregates.
	KeepResults bool

	// Shard runs only part K of N of the profile's plan (see Shard); the
	// zero value runs all of it. The stream's header records it, with
	// Header.RunID and Header.Host saying which run and which machine.
	Shard results.Shard
	// StartAt, when set, is the wall-clock instant the run starts at: Run
	// waits for it precisely and makes it offset 0, so the shards of a run
	// share their offsets (up to the hosts' clock offset). It must be in
	// the future.
	StartAt time.Time
}

// RunResult is what a run measured.
type RunResult struct {
	// Report is the profile's conclusion, with the run's notes. When the
	// target could not be tested its Verdict says "not tested: " and why.
	Report results.Report
	// Summary aggregates every result of the run (the same as
	// Report.Summary when the profile concluded).
	Summary results.Summary
	Start   time.Time     // wall clock of offset 0
	Elapsed time.Duration // from Start to the end of the run
	// Stopped says why the run was cut short ("" when it ran to plan): the
	// profile's rates are then over the time actually spent, and a note
	// says so.
	Stopped StopReason
	// Untested says why the target could not be tested ("" when it was):
	// nothing was answered with an admission or a rejection, or the
	// profile could not complete its experiment.
	Untested string
	// Concluded says the profile finished its analysis: Report is its
	// table and verdict. Otherwise Report holds only the summary and notes.
	Concluded bool
	// Results are the kept results in send order (see KeepResults).
	Results []*results.Result
	// CPU is this process's CPU use over the run, per request too: the
	// tool's own cost (zero where the platform does not report it).
	CPU CPUUsage
	// Out is the results file ("" without one); StreamErr is its own
	// failure to write, which leaves the measurements themselves intact.
	Out       string
	StreamErr error
}

// CutShort reports whether a budget or the caller's context ended the run
// before its plan did.
func (r *RunResult) CutShort() bool { return r.Stopped != "" }

// ErrUntested is wrapped by Run's error when the run happened but could not
// test the target: every request failed, nothing was answered with an
// admission or a rejection, or the profile could not complete its
// experiment.
var ErrUntested = errors.New("not tested")

// Run runs profile p against opts.Request and returns what it measured. It
// is the whole lifecycle: check p and opts, create the results stream,
// start the engine, run the profile, wait for every request, and end the
// stream with the outcome and the notes (a budget reached, an interruption).
//
// Cancelling ctx interrupts the run: requests in flight are abandoned, and
// the result covers what was measured until then (Stopped is
// StopInterrupted).
//
// The error is a *ConfigError, with a nil result, when p or opts cannot run
// as given (nothing was sent); it wraps ErrUntested, with the partial
// result, when the run could not test the target.
func Run(ctx context.Context, p Profile, opts RunOptions) (*RunResult, error) {
	o := opts.Options
	o.fill()
	if err := o.validate(); err != nil {
		return nil, err
	}
	if opts.Request == nil {
		return nil, configErr("RunOptions.Request", "no request to send: set RunOptions.Request (attack.NewRequest)")
	}
	p, err := shardProfile(p, opts.Shard)
	if err != nil {
		return nil, err
	}
	if v, ok := p.(Validator); ok {
		if err := v.Validate(o); err != nil {
			return nil, err
		}
	}
	if !opts.StartAt.IsZero() && time.Until(opts.StartAt) <= 0 {
		return nil, configErr("RunOptions.StartAt", "the start instant %s passed %s ago: give one in the future",
			opts.StartAt.UTC().Format(time.RFC3339Nano), time.Since(opts.StartAt).Round(time.Millisecond))
	}
	col := NewCollector(opts.KeepResults || !aggregatesOnly(p))
	sinks := []func(*results.Result){col.Add}
	var stream *results.Stream
	if opts.Out != "" {
		if stream, err = results.OpenStream(opts.Out); err != nil {
			return nil, &ConfigError{Field: "RunOptions.Out", Msg: err.Error()}
		}
		sinks = append(sinks, stream.Add)
	}
	eng := New(opts.Request, o, append(sinks, opts.Sinks...)...)
	eng.WarmFor(ctx, p)                             // before the clock starts: the time budget is the plan's
	start, began := waitForStart(ctx, opts.StartAt) // offset 0 of the run and the header's wall clock
	if stream != nil {
		h := opts.Header
		h.URL, h.Profile, h.Start = opts.Request.URL.String(), p.Name(), start
		if !opts.StartAt.IsZero() {
			// Every shard records the same instant, not its own reading of it.
			h.Start, h.StartAt, h.BeganAt = opts.StartAt, opts.StartAt, began
		}
		if !opts.Shard.Whole() {
			s := opts.Shard
			h.Shard = &s
		}
		if err := stream.Begin(h); err != nil {
			stream.Discard()
			return nil, &ConfigError{Field: "RunOptions.Out", Msg: err.Error()}
		}
	}
	rep, runErr := p.Run(eng.BeginAt(ctx, start), eng, col)
	eng.Finish()

	res := &RunResult{Start: start, Elapsed: eng.Now(), Stopped: eng.Stopped(), Summary: col.Metrics.Summary(), Out: opts.Out, CPU: eng.CPU()}
	if col.Keep {
		res.Results = col.Results()
	}
	notes := eng.Notes()
	if res.Stopped == StopInterrupted {
		n := fmt.Sprintf("interrupted after %.2f s: the figures cover only what was sent before", res.Elapsed.Seconds())
		if opts.Out != "" {
			n += "; the results so far are in " + opts.Out
		}
		notes = append(notes, n)
	}
	if runErr == nil {
		res.Concluded = true
		res.Untested = res.Summary.Untested(string(res.Stopped))
		if res.Untested != "" {
			rep.Verdict = "not tested: " + res.Untested
		}
		rep.Notes = notes
		res.Report = rep
		if stream != nil {
			stream.Conclude(rep)
		}
	} else {
		res.Report = results.Report{Profile: p.Name(), Summary: res.Summary, Notes: notes}
		// A profile that could not finish because nothing answered says
		// so in its own words; the cause of every failure is the clearer.
		if why := res.Summary.Untested(string(res.Stopped)); why != "" {
			runErr = errors.New(why)
		}
		res.Untested = runErr.Error()
	}
	if stream != nil {
		if res.Stopped == StopInterrupted {
			stream.SetStopped(string(StopInterrupted))
		}
		res.StreamErr = stream.Close(notes, res.Elapsed)
	}
	switch {
	case runErr != nil:
		return res, fmt.Errorf("%w: %s: %w", ErrUntested, p.Name(), runErr)
	case res.Untested != "":
		return res, fmt.Errorf("%w: %s", ErrUntested, res.Untested)
	}
	return res, nil
}

// waitForStart waits for the wall-clock instant at (now when zero) and
// returns the run's offset 0 — at itself, carrying a monotonic reading so
// the run's offsets do not follow a clock step — and the instant the wait
// actually ended. The budgets start only then. Cancelling ctx ends the
// wait early; the run then sends nothing and says it was interrupted.
func waitForStart(ctx context.Context, at time.Time) (start, began time.Time) {
	if at.IsZero() {
		now := time.Now()
		return now, now
	}
	start = time.Now().Add(time.Until(at))
	// On a pacing thread (fine timer slack, retired with it): the same
	// precise clock every shard waits with.
	onPacingThread(func() {
		waitUntil(ctx, start)
		began = time.Now()
	})
	return start, began
}

// aggregatesOnly reports whether p analyses the aggregates alone, so its
// results need not be kept.
func aggregatesOnly(p Profile) bool {
	switch p.(type) {
	case Steady, *Steady:
		return true
	}
	return false
}
