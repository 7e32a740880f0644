package probe

import (
	"time"

	"github.com/ratecheck/ratecheck/probe/observation"
	"github.com/ratecheck/ratecheck/results"
)

// The recorded run (probe/observation) under the names the packages that
// grade, render and expect from a probe already use: they read an
// observation next to its inference, and import probe alone.

// Observation is one probe's results and what the plan learned on the way.
type Observation = observation.Observation

// Budget is a probe's request and time budget.
type Budget = observation.Budget

// StopInterrupted is Observation.Stopped for a run cut short by a signal or
// a cancelled context.
const StopInterrupted = observation.StopInterrupted

// The scope values (Inference.Scope).
const (
	ScopePerKey        = observation.ScopePerKey
	ScopePerIP         = observation.ScopePerIP
	ScopePerConnection = observation.ScopePerConnection
	ScopeGlobal        = observation.ScopeGlobal
	// ScopeUntested: no second identity could say.
	ScopeUntested = observation.ScopeUntested
)

// NewObservation wraps results recorded elsewhere (an attack profile, a
// saved results file) so they can be graded or inferred from.
func NewObservation(start time.Time, rs []results.Result) *Observation {
	return observation.New(start, rs)
}

// MinRTT is the timing uncertainty of results (observation.MinRTT).
func MinRTT(rs []results.Result) time.Duration { return observation.MinRTT(rs) }

// ConnKey is the replay's (and the grade's) key for a request when the
// limit counts per connection.
func ConnKey(r *results.Result) string { return observation.ConnKey(r) }

// OwnTraffic reports whether a request of phase is the probe's own traffic
// for a limit of this scope (Inference.Scope): what the grade judges the
// response contract on.
func OwnTraffic(phase, scope string) bool { return observation.OwnTraffic(phase, scope) }

// IsSpoofTrial reports a phase that forged a proxy header.
func IsSpoofTrial(phase string) bool { return observation.IsSpoofTrial(phase) }
