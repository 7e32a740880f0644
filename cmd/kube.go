package cmd

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

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
		Use:   "kube",
		Short: "Kubernetes manifests that run ratecheck on many machines",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return usageErr("kube needs a subcommand: job; see '%s --help'", c.CommandPath())
		},
	}
	c.AddCommand(newKubeJobCmd())
	return c
}

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
		Example: `  ratecheck kube job --shards 8 --start-in 60s --image registry.example/ratecheck:v1 -- \
      attack --profile steady --rate 40000/s --duration 60s http://gateway.internal/ | kubectl apply -f -`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error { return runKubeJob(c, &f, args) },
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
	job, err := f.job(attackArgs, startAt, runID, maxDur)
	if err != nil {
		return err
	}
	b, err := yaml.Marshal(job)
	if err != nil {
		return err
	}
	_, err = c.OutOrStdout().Write(b)
	return err
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

// job builds the Indexed Job running attackArgs as f.shards shards.
func (f *kubeJobFlags) job(attackArgs []string, startAt time.Time, runID string, maxDur time.Duration) (*batchv1.Job, error) {
	cpu, err := resource.ParseQuantity(f.cpu)
	if err != nil {
		return nil, usageErr("--cpu %q: %v (e.g. 2 or 1500m)", f.cpu, err)
	}
	mem, err := resource.ParseQuantity(f.memory)
	if err != nil {
		return nil, usageErr("--memory %q: %v (e.g. 512Mi)", f.memory, err)
	}
	name := f.name
	if name == "" {
		name = "ratecheck-" + runID
	}
	labels := map[string]string{"app.kubernetes.io/name": "ratecheck", "ratecheck/run-id": runID}
	args := []string{"attack", "--quiet",
		"--shard", fmt.Sprintf("auto/%d", f.shards),
		"--start-at", startAt.Format(time.RFC3339Nano),
		"--run-id", runID}
	var volumes []corev1.Volume
	var mounts []corev1.VolumeMount
	switch {
	case f.results == "stdout":
		// The stream is the log: header first, end record last, and
		// nothing else is written to either output before the end.
		args = append(args, "--out", "/dev/stdout")
	case strings.HasPrefix(f.results, "pvc:") && len(f.results) > len("pvc:"):
		claim := strings.TrimPrefix(f.results, "pvc:")
		volumes = []corev1.Volume{{Name: "results", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
		mounts = []corev1.VolumeMount{{Name: "results", MountPath: resultsDir}}
		// Kubernetes expands $(VAR) in args from the container's env.
		out := fmt.Sprintf("%s/%s-index-$(JOB_COMPLETION_INDEX).jsonl", resultsDir, runID)
		args = append(args, "--out", out)
	default:
		return nil, usageErr("--results %q: use stdout or pvc:CLAIM", f.results)
	}
	args = append(args, attackArgs...)
	n := int32(f.shards)
	indexed := batchv1.IndexedCompletion
	// A retried pod would start after the common instant and refuse to
	// run: no retries, and the whole Job ends by the run's own budget.
	backoff := int32(0)
	deadline := int64((f.startIn + maxDur + f.grace).Seconds())
	yes, no := true, false
	uid := int64(65532) // distroless "nonroot"
	res := corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem}
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			CompletionMode:        &indexed,
			Completions:           &n,
			Parallelism:           &n,
			BackoffLimit:          &backoff,
			ActiveDeadlineSeconds: &deadline,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					// One pod per node where possible: each shard then
					// has its own address and its own cores.
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 100,
							PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname",
								LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"ratecheck/run-id": runID}}}}}}},
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes, RunAsUser: &uid, RunAsGroup: &uid,
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Volumes: volumes,
					Containers: []corev1.Container{{
						Name:      "ratecheck",
						Image:     f.image,
						Args:      args,
						Env:       []corev1.EnvVar{{Name: envShards, Value: fmt.Sprint(f.shards)}},
						Resources: corev1.ResourceRequirements{Requests: res, Limits: res},
						SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, ReadOnlyRootFilesystem: &yes,
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
						VolumeMounts: mounts,
					}},
				},
			},
		},
	}, nil
}
