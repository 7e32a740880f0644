// Package kube writes the Kubernetes Job that runs one attack as N shards
// starting on one instant (attack/shard.go; README: "Beyond one machine"):
// the shard plan rendered for a cluster, before anything is sent. It
// writes the manifest with local types carrying the API's yaml names
// (manifest.go): Kubernetes' own modules serve only the tests.
package kube

import (
	"fmt"
	"io"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// The environment of a pod in a Kubernetes Indexed Job: the pod's index
// (set by Kubernetes, 0 … N−1) and the shard count (set by the manifest).
const (
	EnvJobIndex = "JOB_COMPLETION_INDEX"
	EnvShards   = "RATECHECK_SHARDS"
)

// Spec describes the Job around the attack: what 'ratecheck kube job' is
// asked for.
type Spec struct {
	Shards    int           // pods, one shard each
	StartIn   time.Duration // the common start, from now
	Image     string
	Namespace string // "": kubectl's
	Name      string // "": ratecheck-RUNID
	CPU       string // a Kubernetes quantity, requested and limited alike
	Memory    string
	Results   string        // stdout or pvc:CLAIM
	Grace     time.Duration // beyond the start and the attack's time budget
}

// resultsDir is where a pod writes its stream with Results pvc:CLAIM.
const resultsDir = "/results"

// The pods' identity: distroless's "nonroot" user and group, which the
// image runs as.
const nonrootID = 65532

// antiAffinityWeight is the highest a preference can weigh: the scheduler
// puts two shards on one node only when it has no other.
const antiAffinityWeight = 100

// Job is the Indexed Job running attackArgs as s.Shards shards, every pod
// starting at startAt; maxDur is the attack's time budget.
func (s Spec) Job(attackArgs []string, startAt time.Time, runID string, maxDur time.Duration) *Job {
	name := s.Name
	if name == "" {
		name = "ratecheck-" + runID
	}
	labels := map[string]string{"app.kubernetes.io/name": "ratecheck", "ratecheck/run-id": runID}
	return &Job{
		APIVersion: "batch/v1",
		Kind:       "Job",
		Metadata:   meta{Name: name, Namespace: s.Namespace, Labels: labels},
		Spec: jobSpec{
			CompletionMode: "Indexed",
			Completions:    s.Shards,
			Parallelism:    s.Shards,
			// A retried pod would start after the common instant and
			// refuse to run: no retries, and the whole Job ends by the
			// run's own budget.
			BackoffLimit:          0,
			ActiveDeadlineSeconds: int64((s.StartIn + maxDur + s.Grace).Seconds()),
			Template: podTemplate{
				Metadata: meta{Labels: labels},
				Spec:     s.pod(attackArgs, startAt, runID),
			},
		},
	}
}

// pod is the pod of every shard: one container, unprivileged, its pods
// spread over the nodes.
func (s Spec) pod(attackArgs []string, startAt time.Time, runID string) podSpec {
	args := []string{"attack", "--quiet",
		"--shard", fmt.Sprintf("auto/%d", s.Shards),
		"--start-at", startAt.Format(time.RFC3339Nano),
		"--run-id", runID}
	out, volumes, mounts := s.out(runID)
	res := resourceList{CPU: s.CPU, Memory: s.Memory}
	return podSpec{
		RestartPolicy: "Never",
		// One pod per node where possible: each shard then has its own
		// address and its own cores.
		Affinity: affinity{PodAntiAffinity: antiAffinity{Preferred: []weightedTerm{{
			Weight: antiAffinityWeight,
			Term: affinityTerm{TopologyKey: "kubernetes.io/hostname",
				LabelSelector: selector{MatchLabels: map[string]string{"ratecheck/run-id": runID}}},
		}}}},
		SecurityContext: podSecurity{RunAsNonRoot: true, RunAsUser: nonrootID, RunAsGroup: nonrootID,
			SeccompProfile: seccomp{Type: "RuntimeDefault"}},
		Volumes: volumes,
		Containers: []container{{
			Name:      "ratecheck",
			Image:     s.Image,
			Args:      append(append(args, "--out", out), attackArgs...),
			Env:       []envVar{{Name: EnvShards, Value: fmt.Sprint(s.Shards)}},
			Resources: resources{Requests: res, Limits: res},
			// No privilege at all, so a burst is released at normal
			// priority, as on a user's machine without capabilities.
			SecurityContext: containerSecurity{AllowPrivilegeEscalation: false, ReadOnlyRootFilesystem: true,
				Capabilities: capabilities{Drop: []string{"ALL"}}},
			VolumeMounts: mounts,
		}},
	}
}

// out is where a pod writes its results stream (--out), with the volume
// that takes it (none for stdout).
func (s Spec) out(runID string) (string, []volume, []volumeMount) {
	claim, ok := strings.CutPrefix(s.Results, "pvc:")
	if !ok {
		// The stream is the log: header first, end record last, and
		// nothing else is written to either output before the end.
		return "/dev/stdout", nil, nil
	}
	volumes := []volume{{Name: "results", PersistentVolumeClaim: claimRef{ClaimName: claim}}}
	mounts := []volumeMount{{Name: "results", MountPath: resultsDir}}
	// Kubernetes expands $(VAR) in args from the container's env.
	return fmt.Sprintf("%s/%s-index-$(JOB_COMPLETION_INDEX).jsonl", resultsDir, runID), volumes, mounts
}

// Write prints the manifest as kubectl does: two-space indents, list
// items level with their key.
func (j *Job) Write(w io.Writer) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(j); err != nil {
		return err
	}
	return enc.Close()
}
