package observation

// The phases of a probe, as recorded in each result's Phase field: what the
// plan sent a request for, and so what the inference reads it as.

// The plan's main phases (probe/plan's plan.go).
const (
	PhaseCalibrate  = "calibrate"
	PhaseBurst      = "burst"
	PhaseSequential = "sequential"
	PhaseTrace      = "trace"
	PhaseSustain    = "sustain"
	PhaseScopeRef   = "scope-ref"
	PhaseScopeOther = "scope-other"
)

// What Retry-After and Reset promise is what a well-behaved client sees:
// after a rejection it sends nothing on that key until the time the header
// names, then one request. These phases do exactly that, so the grade can
// judge the headers on the waits the headers ask for.
const (
	// PhaseRetryWait is the one request sent when a rejection's
	// Retry-After has passed in silence.
	PhaseRetryWait = "retry-wait"
	// PhaseResetWait is the one request sent when a rejection's Reset
	// (X-RateLimit-Reset, RateLimit t) has passed in silence.
	PhaseResetWait = "reset-wait"
	// PhaseSilentExhaust are the sequential requests that use the quota
	// up again between the two waits.
	PhaseSilentExhaust = "silent-exhaust"
	// PhaseSilentBurst is the burst released at one instant when
	// sequential requests find no limit (a concurrency cap).
	PhaseSilentBurst = "silent-burst"
)

// The scope trials' phases (probe/plan's scope.go), besides phaseScopeRef
// and phaseScopeOther (the second key).
const (
	PhaseScopeIP        = "scope-ip"
	PhaseScopeConn      = "scope-conn"
	PhaseScopeXFF       = "scope-xff"
	PhaseScopeXRealIP   = "scope-x-real-ip"
	PhaseScopeForwarded = "scope-forwarded"
)

// PhaseSplit is the deciding experiment between tied models (probe/plan's
// split.go).
const PhaseSplit = "split"
