package probe

import (
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/ratecheck/ratecheck/headers"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// Replicas: a limit enforced by N replicas that each count alone, behind a
// balancer that spreads requests evenly, admits N times what each
// advertises, and in one burst their Remaining values interleave N falling
// sequences — every value N times (19, 19, 19, 18, 18, 18, …) where one
// counter would say each once. Read from the burst with the most
// admissions; a store read and written non-atomically shows neither shape
// (many responses repeat the first values), so it is not taken for
// replicas: burst.over-admission judges it.

// ReplicaFindings is what the quota headers of a burst say about how many
// counters the requests met.
type ReplicaFindings struct {
	Replicas   int // counters counting alone (≥ 2), 1 for one counter, 0 unknown
	Advertised int // the X-RateLimit-Limit each response carried
	Admitted   int // in the burst read
	Burst      string
}

// minReplicaValues: fewer distinct Remaining values than this show no
// sequence.
const minReplicaValues = 3

// replicaFindings reads the burst with the most admissions.
func replicaFindings(o *observation.Observation) ReplicaFindings {
	var best ReplicaFindings
	bestAdmitted := -1
	for _, phase := range o.BurstPhases() {
		limits := map[int64]int{}
		counts := map[int64]int{}
		admitted := 0
		for _, r := range o.Phase(phase) {
			if !observation.Decided(&r) || !r.Admitted() {
				continue
			}
			admitted++
			h := http.Header{}
			for k, v := range r.Headers {
				h.Set(k, v)
			}
			x, _ := headers.ParseXRateLimit(h, time.Time{})
			if x.Limit.Present && x.Limit.Err == nil && x.Remaining.Present && x.Remaining.Err == nil {
				limits[x.Limit.Value]++
				counts[x.Remaining.Value]++
			}
		}
		if admitted <= bestAdmitted {
			continue
		}
		bestAdmitted = admitted
		best = ReplicaFindings{Admitted: admitted, Burst: phase}
		var limit int64
		for l, n := range limits {
			if n > limits[limit] {
				limit = l
			}
		}
		best.Advertised = int(limit)
		best.Replicas = interleaved(counts)
	}
	return best
}

// interleaved is N when the Remaining values fall one by one from the top
// with every value seen exactly N times (the lowest, where the burst ran
// out, at most N); 0 when they show no such shape.
func interleaved(counts map[int64]int) int {
	if len(counts) < minReplicaValues {
		return 0
	}
	values := make([]int64, 0, len(counts))
	for v := range counts {
		values = append(values, v)
	}
	sort.Slice(values, func(i, j int) bool { return values[i] > values[j] })
	n := counts[values[0]]
	for i, v := range values {
		if i > 0 && values[i-1]-v != 1 {
			return 0
		}
		if c := counts[v]; c != n && (i != len(values)-1 || c > n) {
			return 0
		}
	}
	return n
}

// setReplicas records the findings on the inference.
func (inf *Inference) setReplicas(f ReplicaFindings) {
	if f.Replicas >= 2 && f.Advertised > 0 {
		inf.Replicas, inf.AdvertisedLimit = f.Replicas, f.Advertised
		inf.EffectiveLimit = f.Replicas * f.Advertised
	}
}

// replicaFacts are the evidence lines of the replica reading.
func replicaFacts(f ReplicaFindings) []string {
	switch {
	case f.Advertised == 0:
		return nil
	case f.Replicas >= 2:
		return []string{fmt.Sprintf("%d replicas with their own counters: the effective limit is %d× the advertised %d (%d); in %s, %d admitted responses carried each X-RateLimit-Remaining value %d times",
			f.Replicas, f.Replicas, f.Advertised, f.Replicas*f.Advertised, f.Burst, f.Admitted, f.Replicas)}
	case f.Replicas == 1 && f.Admitted <= f.Advertised:
		return []string{fmt.Sprintf("one shared limit of %d: in %s X-RateLimit-Remaining fell by one per admission (%d admitted)", f.Advertised, f.Burst, f.Admitted)}
	}
	return nil
}
