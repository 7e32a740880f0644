package grade

import (
	"fmt"
	"strings"

	"github.com/ratecheck/ratecheck/probe"
)

// checkScopeSpoofable: a limit keyed on a header the client writes
// (X-Forwarded-For, X-Real-IP, Forwarded), behind no proxy that overwrites
// it, gives every client a fresh quota per request. The probe exhausts its
// address and then forges each header with fresh values (probe/scope.go).
func checkScopeSpoofable(v *view) verdict {
	inf := v.inf
	if len(inf.Spoofable) == 0 {
		if !inf.SpoofTested {
			return skip("the forged-header trials did not run or told nothing (the probe's own requests were not limited around them)")
		}
		return verdict{outcome: Pass, actual: "fresh X-Forwarded-For, X-Real-IP and Forwarded values sent from the exhausted address were rejected like it", seqs: spoofSeqs(v, false)}
	}
	first := inf.Spoofable[0]
	return verdict{outcome: Fail,
		actual: fmt.Sprintf("from the exhausted address, fresh values of %s were each admitted while the address's own requests stayed rejected", strings.Join(inf.Spoofable, ", ")),
		hint:   "key the limit on the peer address, or read the client address from " + first + " only when the request comes from your own proxy, which overwrites it (a trusted-proxy list)",
		seqs:   spoofSeqs(v, true),
		capWhy: "anyone can bypass this limit by sending " + first}
}

// spoofSeqs are the forged-header requests (the admitted ones when admitted).
func spoofSeqs(v *view, admitted bool) []int {
	var out []int
	if v.obs == nil {
		return nil
	}
	for _, r := range v.obs.Results {
		if probe.IsSpoofTrial(r.Phase) && (!admitted || r.Admitted()) && len(out) < maxSeqs {
			out = append(out, r.Seq)
		}
	}
	return out
}

// replicaNote starts a limit check's finding with the replicas the probe
// recognised (probe/replicas.go): why the limit is a multiple.
func replicaNote(v *view) string {
	if v.inf.Replicas < 2 {
		return ""
	}
	return fmt.Sprintf("%d replicas with their own counters: the effective limit is %d× the advertised %d (%d); ",
		v.inf.Replicas, v.inf.Replicas, v.inf.AdvertisedLimit, v.inf.EffectiveLimit)
}

// replicaHint is the fix for replicas counting alone, else fallback.
func replicaHint(v *view, fallback string) string {
	if v.inf.Replicas < 2 {
		return fallback
	}
	return "count in one store every replica shares, updated atomically (a Lua script in Redis), or advertise the limit each client really gets"
}
