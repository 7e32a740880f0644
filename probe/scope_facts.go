package probe

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// The scope experiment's part of the verdict: its evidence lines and the
// findings on the inference.

// scopeFacts are the evidence lines of the scope experiment.
func scopeFacts(inf Inference) []string {
	var out []string
	for _, t := range inf.ScopeTrials {
		if slices.Contains(observation.SpoofIdentities(), t.Identity) {
			continue
		}
		s := "after exhaustion, another " + t.Identity
		if t.Detail != "" && t.Outcome != observation.TrialUnclear {
			s += " (" + t.Detail + ")"
		}
		switch t.Outcome {
		case observation.TrialOwn:
			s += fmt.Sprintf(" was admitted %d times while the probe's own stayed rejected: it has capacity of its own", observation.ScopeTrialShots)
		case observation.TrialShared:
			s += " was rejected too: it shares the limit"
		default:
			s += " told nothing: " + t.Detail
		}
		out = append(out, s)
	}
	switch {
	case inf.Scope == observation.ScopeUntested && inf.ScopeReason != "":
		out = append(out, "scope untested: "+inf.ScopeReason)
	case inf.Scope != observation.ScopeUntested:
		out = append(out, "the limit is "+strings.ReplaceAll(inf.Scope, "_", " "))
	}
	switch {
	case len(inf.Spoofable) > 0:
		out = append(out, fmt.Sprintf("anyone can bypass this limit by sending %s: from the exhausted address, fresh values of %s were admitted", inf.Spoofable[0], strings.Join(inf.Spoofable, ", ")))
	case inf.SpoofTested:
		out = append(out, "fresh X-Forwarded-For, X-Real-IP and Forwarded values from the exhausted address were rejected: the limit does not trust them")
	}
	return out
}

// setScope records the scope findings on the inference.
func (inf *Inference) setScope(f observation.ScopeFindings) {
	inf.Scope, inf.ScopeReason, inf.ScopeTrials = f.Scope, f.Reason, f.Trials
	inf.Spoofable, inf.SpoofTested = f.Spoofable, f.SpoofTested
}
