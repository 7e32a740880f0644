// Package probe says what a limiter is from how it behaves. Run is the
// entry point: it drives an adaptive experiment against a target through
// the attack engine (probe/plan), streams every result, and infers. probe/fit
// replays what was observed through every reference model of
// targets/limiter — the same code `ratecheck serve` runs — and keeps the
// family and parameters that explain the decisions best; inference.go turns
// that into a verdict with evidence; earned.go refuses any verdict whose
// deciding experiment did not run (interrupted, starved of budget, no
// answers), so such a probe is Inconclusive with the reason.
//
// The recorded run it reads is probe/observation's (recorded.go gives its
// types their names here).
package probe
