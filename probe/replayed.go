package probe

import (
	"github.com/ratecheck/ratecheck/probe/fit"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// The replay of a model over an observation (probe/fit) under the names
// grade and report use: they redraw and recount what the fit did.

// Replayed is a limiter model replayed over an observation's decided
// requests (fit.Replayed).
type Replayed = fit.Replayed

// Replay runs cfg over the observation exactly as the fit does
// (fit.Replay).
func Replay(o *Observation, cfg limiter.Config) (Replayed, error) { return fit.Replay(o, cfg) }

// DelayResolution is the shortest queueing delay a probe tells from a
// loaded machine's noise (fit.DelayNoise): a queue that holds requests
// less than this decides like the bucket of its capacity, and is one to
// a probe.
const DelayResolution = fit.DelayNoise
