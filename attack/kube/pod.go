package kube

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/results"
)

// PodShard is the shard --shard v names: K/N as given, or with "auto" or
// "auto/N" K from the pod's index (EnvJobIndex, K = index+1) and N from
// EnvShards unless given. With no --shard, a pod of the Job the manifest
// describes (both variables set) is "auto"; anything else is the whole
// run. The errors name the flag and the variable to fix.
func PodShard(v string, getenv func(string) string) (results.Shard, error) {
	if v == "" && getenv(EnvJobIndex) != "" && getenv(EnvShards) != "" {
		v = "auto" // a pod of the Job the manifest describes
	}
	if v == "" {
		return results.Shard{}, nil
	}
	if rest, ok := strings.CutPrefix(v, "auto"); ok {
		idx := getenv(EnvJobIndex)
		i, err := strconv.Atoi(idx)
		if idx == "" || err != nil || i < 0 {
			return results.Shard{}, fmt.Errorf("--shard %s takes K from $%s (a Kubernetes Indexed Job's pod index), which is %q here: give --shard K/N", v, EnvJobIndex, idx)
		}
		n := strings.TrimPrefix(rest, "/")
		if rest == "" {
			if n = getenv(EnvShards); n == "" {
				return results.Shard{}, fmt.Errorf("--shard auto needs the shard count: --shard auto/N, or $%s", EnvShards)
			}
		}
		v = strconv.Itoa(i+1) + "/" + n
	}
	s, err := results.ParseShard(v)
	if err != nil {
		return results.Shard{}, fmt.Errorf("--shard: %v", err)
	}
	return s, nil
}

// Plan is what one process of a sharded run, or of a run started on an
// instant, runs: its shard (zero: the whole run), the common start (zero:
// now) and the run id every shard records ("" for neither).
type Plan struct {
	Shard   results.Shard
	StartAt time.Time
	RunID   string
}

// PodPlan resolves the flags --shard (PodShard), --start-at
// (attack.ParseStartAt, now anchoring a relative one) and --run-id as
// given. A shard needs a common start. With no run id given, a sharded
// run or one started on an instant derives it from its start (derive: the
// settings every shard shares, attack.RunID), so that every shard computes
// the same.
func PodPlan(shard, startAt, runID string, now time.Time, getenv func(string) string, derive func(time.Time) string) (Plan, error) {
	var p Plan
	var err error
	if p.Shard, err = PodShard(shard, getenv); err != nil {
		return p, err
	}
	if p.StartAt, err = attack.ParseStartAt(startAt, now); err != nil {
		return p, fmt.Errorf("--start-at %v", err)
	}
	if !p.Shard.Whole() && p.StartAt.IsZero() {
		return p, fmt.Errorf("--shard %s needs --start-at: the shards of a run start together on a common instant", p.Shard)
	}
	p.RunID = runID
	if p.RunID == "" && (!p.Shard.Whole() || !p.StartAt.IsZero()) {
		p.RunID = derive(p.StartAt)
	}
	return p, nil
}

// PodFlags are the attack's flags the Job sets for every pod itself: its
// shard, the common start, where its stream goes and the run id.
var PodFlags = []string{"shard", "start-at", "out", "run-id"}

// CheckAttack refuses an attack the Job cannot run as its pods: a target
// every pod cannot reach alike (a builtin: or nginx: target would be one
// per pod), or one of PodFlags already given.
func CheckAttack(target string, given func(flag string) bool) error {
	if !strings.HasPrefix(target, "http://") && !strings.HasPrefix(target, "https://") {
		return fmt.Errorf("the attack's target %q must be an http(s) URL the pods can reach: a builtin: or nginx: target would be one per pod", target)
	}
	for _, own := range PodFlags {
		if given(own) {
			return fmt.Errorf("the attack after '--' sets --%s: kube job sets it for every pod itself", own)
		}
	}
	return nil
}
