package refserver

import (
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"
)

// NewSharedHandler serves opt's contract with a limiter that keeps its
// state in a store shared with other replicas (targets/fleet) and is safe
// for concurrent use: the handler takes no lock around it, as the replicas
// of a real service do not, so a store that reads and writes in two steps
// races as it would there. opt.Limiter must be the limiter's configuration.
func NewSharedHandler(opt Options, lim limiter.Limiter) *Handler {
	return &Handler{opt: opt, lim: lim, now: time.Now, shared: true}
}
