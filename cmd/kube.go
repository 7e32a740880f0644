package cmd

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/ratecheck/ratecheck/attack"
)

// kubeJobFlags describe the Job around the attack.
type kubeJobFlags struct {
	shards    int
	startIn   time.Duration
	image     string
	namespace string
	name      string
	cpu       string
	memory    string
	results   string
	grace     time.Duration
}

func newKubeCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "kube",
		Short:   "Kubernetes manifests that run ratecheck on many machines",
		Example: kubeJobExample,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return usageErr("kube needs a subcommand: job; see '%s --help'", c.CommandPath())
		},
	}
	c.AddCommand(newKubeJobCmd())
	return c
}

// kubeJobExample is the help's example of kube and of kube job: eight pods,
// their streams in their logs, then the same on a volume claim.
const kubeJobExample = `  ratecheck kube job --shards 8 --start-in 60s --image registry.example/ratecheck:v1 -- \
      attack --profile steady --rate 40000/s --duration 60s http://gateway.internal/ | kubectl apply -f -
  ratecheck kube job --shards 4 --name burst-gw --namespace load --cpu 1500m --memory 1Gi --results pvc:runs -- \
      attack --profile burst --burst 4000 --max-conns 8000 https://gateway.internal/ | kubectl apply -f -`

func newKubeJobCmd() *cobra.Command {
	var f kubeJobFlags
	c := &cobra.Command{
		Use:   "job --shards N --start-in DURATION [flags] -- attack ATTACK-FLAGS URL",
		Short: "Print an Indexed Job that runs one attack as N shards starting on one instant",
		Long: `job prints a Kubernetes batch/v1 Job (completionMode: Indexed) whose N pods each
run one shard of the attack after '--': pod i runs --shard auto/N, which takes
K = i+1 from JOB_COMPLETION_INDEX, and every pod starts on the same instant,
--start-in from now, written into the manifest as a concrete --start-at.
Apply it at once: a pod that starts after that instant refuses to run.

Each pod writes its results stream (JSON Lines) to its log (--results stdout)
or to a ReadWriteMany volume claim (--results pvc:CLAIM, one file per pod).
Collect the streams and merge them with 'ratecheck report' (README: "Beyond
one machine").`,
		Example: kubeJobExample,
		Args:    cobra.ArbitraryArgs,
		RunE:    func(c *cobra.Command, args []string) error { return runKubeJob(c, &f, args) },
	}
	fs := c.Flags()
	fs.IntVar(&f.shards, "shards", 0, "how many pods (shards) share the attack (required)")
	fs.DurationVar(&f.startIn, "start-in", time.Minute, "the common start, from now: time for the pods to be scheduled and pull the image")
	fs.StringVar(&f.image, "image", "ratecheck:"+version, "the container image (build it with the Dockerfile)")
	fs.StringVarP(&f.namespace, "namespace", "n", "", "the Job's namespace (default: kubectl's)")
	fs.StringVar(&f.name, "name", "", "the Job's name (default ratecheck-RUNID)")
	fs.StringVar(&f.cpu, "cpu", "2", "CPU per pod, requested and limited alike (a pacing thread and a writer need whole cores)")
	fs.StringVar(&f.memory, "memory", "512Mi", "memory per pod, requested and limited alike")
	fs.StringVar(&f.results, "results", "stdout", "where each pod writes its results stream: stdout (its log) or pvc:CLAIM (a ReadWriteMany claim mounted at /results)")
	fs.DurationVar(&f.grace, "grace", time.Minute, "time allowed beyond the start and the attack's --max-duration before the Job is stopped (activeDeadlineSeconds)")
	return c
}

func runKubeJob(c *cobra.Command, f *kubeJobFlags, args []string) error {
	if c.ArgsLenAtDash() != 0 || len(args) == 0 || args[0] != "attack" {
		return usageErr("kube job needs the attack after '--': kube job --shards N -- attack --profile … URL")
	}
	if f.shards < 1 {
		return usageErr("--shards must be ≥ 1 (the number of pods)")
	}
	if f.startIn < 5*time.Second {
		return usageErr("--start-in %s is too short for pods to be scheduled: give at least 5s (60s is typical)", f.startIn)
	}
	if err := f.check(); err != nil {
		return err
	}
	// Parse the attack's command line as attack would, so a mistake is
	// found here rather than in eight pods.
	ac := newAttackCmd()
	ac.SetArgs(args[1:])
	if err := ac.ParseFlags(args[1:]); err != nil {
		return usageErr("the attack after '--': %v", err)
	}
	rest := ac.Flags().Args()
	if len(rest) != 1 {
		return usageErr("the attack after '--' needs exactly one TARGET URL (got %d)", len(rest))
	}
	target := rest[0]
	if !strings.HasPrefix(target, "http://") && !strings.HasPrefix(target, "https://") {
		return usageErr("the attack's target %q must be an http(s) URL the pods can reach: a builtin: or nginx: target would be one per pod", target)
	}
	for _, own := range []string{"shard", "start-at", "out", "run-id"} {
		if ac.Flags().Changed(own) {
			return usageErr("the attack after '--' sets --%s: kube job sets it for every pod itself", own)
		}
	}
	maxDur, _ := ac.Flags().GetDuration("max-duration")
	budget, err := shardBudget(ac, f.shards)
	if err != nil {
		return err
	}
	attackArgs := args[1:]
	if budget > 0 {
		attackArgs = append([]string{"--max-requests", fmt.Sprint(budget)}, attackArgs...)
		fmt.Fprintf(c.ErrOrStderr(), "kube job: each pod gets --max-requests %d, its share of the plan (the default %d would cut it short)\n", budget, attack.DefaultMaxRequests)
	}
	startAt := time.Now().Add(f.startIn).UTC().Truncate(time.Millisecond)
	runID := deriveRunID(ac, target, startAt)
	return writeYAML(c.OutOrStdout(), f.job(attackArgs, startAt, runID, maxDur))
}

// shardBudget is the --max-requests each pod of a steady attack needs for
// its share of the plan. When the attack sets none, the pods get exactly
// that (the default would cut them short); when it sets one too small, that
// is refused. 0 when nothing needs adding.
func shardBudget(ac *cobra.Command, shards int) (int, error) {
	fs := ac.Flags()
	if p, _ := fs.GetString("profile"); p != "steady" {
		return 0, nil
	}
	rv, _ := fs.GetString("rate")
	rate, err := rateFlag("rate", rv, true)
	if err != nil || rate == 0 {
		return 0, err
	}
	d, _ := fs.GetDuration("duration")
	total := int(math.Round(rate * d.Seconds()))
	per := (total + shards - 1) / shards
	budget, _ := fs.GetInt("max-requests")
	switch {
	case per <= budget:
		return 0, nil
	case fs.Changed("max-requests"):
		return 0, usageErr("each of the %d shards plans up to %d requests, more than the attack's --max-requests %d: raise it to %d", shards, per, budget, per)
	}
	return per, nil
}

// resultsDir is where a pod writes its stream with --results pvc:CLAIM.
const resultsDir = "/results"

// The pods' identity: distroless's "nonroot" user and group, which the
// image runs as.
const nonrootID = 65532

// antiAffinityWeight is the highest a preference can weigh: the scheduler
// puts two shards on one node only when it has no other.
const antiAffinityWeight = 100

// check refuses, before anything is printed, the Job flags that Kubernetes
// would refuse when the manifest is applied (or, for the pods, only later).
func (f *kubeJobFlags) check() error {
	if f.name != "" {
		if err := checkJobName(f.name, f.shards); err != nil {
			return err
		}
	}
	if f.namespace != "" && !isDNSLabel(f.namespace) {
		return usageErr("--namespace %q: a namespace is a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit, at most %d characters", f.namespace, kubeLabelMax)
	}
	if !kubePositiveQuantity(f.cpu) {
		return usageErr("--cpu %q is not a positive Kubernetes quantity: give cores or millicores above zero (e.g. 2 or 1500m)", f.cpu)
	}
	if !kubePositiveQuantity(f.memory) {
		return usageErr("--memory %q is not a positive Kubernetes quantity: give bytes above zero with a suffix such as Mi or Gi (e.g. 512Mi or 2Gi)", f.memory)
	}
	if claim, ok := strings.CutPrefix(f.results, "pvc:"); f.results != "stdout" && (!ok || claim == "") {
		return usageErr("--results %q: use stdout or pvc:CLAIM", f.results)
	}
	return nil
}

// job builds the Indexed Job running attackArgs as f.shards shards.
func (f *kubeJobFlags) job(attackArgs []string, startAt time.Time, runID string, maxDur time.Duration) *kubeJob {
	name := f.name
	if name == "" {
		name = "ratecheck-" + runID
	}
	labels := map[string]string{"app.kubernetes.io/name": "ratecheck", "ratecheck/run-id": runID}
	return &kubeJob{
		APIVersion: "batch/v1",
		Kind:       "Job",
		Metadata:   kubeMeta{Name: name, Namespace: f.namespace, Labels: labels},
		Spec: kubeJobSpec{
			CompletionMode: "Indexed",
			Completions:    f.shards,
			Parallelism:    f.shards,
			// A retried pod would start after the common instant and
			// refuse to run: no retries, and the whole Job ends by the
			// run's own budget.
			BackoffLimit:          0,
			ActiveDeadlineSeconds: int64((f.startIn + maxDur + f.grace).Seconds()),
			Template: kubePodTemplate{
				Metadata: kubeMeta{Labels: labels},
				Spec:     f.pod(attackArgs, startAt, runID),
			},
		},
	}
}

// pod is the pod of every shard: one container, unprivileged, its pods
// spread over the nodes.
func (f *kubeJobFlags) pod(attackArgs []string, startAt time.Time, runID string) kubePodSpec {
	args := []string{"attack", "--quiet",
		"--shard", fmt.Sprintf("auto/%d", f.shards),
		"--start-at", startAt.Format(time.RFC3339Nano),
		"--run-id", runID}
	out, volumes, mounts := f.out(runID)
	res := kubeResourceList{CPU: f.cpu, Memory: f.memory}
	return kubePodSpec{
		RestartPolicy: "Never",
		// One pod per node where possible: each shard then has its own
		// address and its own cores.
		Affinity: kubeAffinity{PodAntiAffinity: kubeAntiAffinity{Preferred: []kubeWeightedTerm{{
			Weight: antiAffinityWeight,
			Term: kubeAffinityTerm{TopologyKey: "kubernetes.io/hostname",
				LabelSelector: kubeSelector{MatchLabels: map[string]string{"ratecheck/run-id": runID}}},
		}}}},
		SecurityContext: kubePodSecurity{RunAsNonRoot: true, RunAsUser: nonrootID, RunAsGroup: nonrootID,
			SeccompProfile: kubeSeccomp{Type: "RuntimeDefault"}},
		Volumes: volumes,
		Containers: []kubeContainer{{
			Name:      "ratecheck",
			Image:     f.image,
			Args:      append(append(args, "--out", out), attackArgs...),
			Env:       []kubeEnvVar{{Name: envShards, Value: fmt.Sprint(f.shards)}},
			Resources: kubeResources{Requests: res, Limits: res},
			// No privilege at all, so a burst is released at normal
			// priority, as on a user's machine without capabilities.
			SecurityContext: kubeContainerSecurity{AllowPrivilegeEscalation: false, ReadOnlyRootFilesystem: true,
				Capabilities: kubeCapabilities{Drop: []string{"ALL"}}},
			VolumeMounts: mounts,
		}},
	}
}

// out is where a pod writes its results stream (--out), with the volume
// that takes it (none for stdout).
func (f *kubeJobFlags) out(runID string) (string, []kubeVolume, []kubeVolumeMount) {
	claim, ok := strings.CutPrefix(f.results, "pvc:")
	if !ok {
		// The stream is the log: header first, end record last, and
		// nothing else is written to either output before the end.
		return "/dev/stdout", nil, nil
	}
	volumes := []kubeVolume{{Name: "results", PersistentVolumeClaim: kubeClaimRef{ClaimName: claim}}}
	mounts := []kubeVolumeMount{{Name: "results", MountPath: resultsDir}}
	// Kubernetes expands $(VAR) in args from the container's env.
	return fmt.Sprintf("%s/%s-index-$(JOB_COMPLETION_INDEX).jsonl", resultsDir, runID), volumes, mounts
}

// writeYAML prints the manifest as kubectl does: two-space indents, list
// items level with their key.
func writeYAML(w io.Writer, v any) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(v); err != nil {
		return err
	}
	return enc.Close()
}
