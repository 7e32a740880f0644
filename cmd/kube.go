package cmd

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/attack/kube"
)

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
	var f kube.Spec
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
	fs.IntVar(&f.Shards, "shards", 0, "how many pods (shards) share the attack (required)")
	fs.DurationVar(&f.StartIn, "start-in", time.Minute, "the common start, from now: time for the pods to be scheduled and pull the image")
	fs.StringVar(&f.Image, "image", "ratecheck:"+version, "the container image (build it with the Dockerfile)")
	fs.StringVarP(&f.Namespace, "namespace", "n", "", "the Job's namespace (default: kubectl's)")
	fs.StringVar(&f.Name, "name", "", "the Job's name (default ratecheck-RUNID)")
	fs.StringVar(&f.CPU, "cpu", "2", "CPU per pod, requested and limited alike (a pacing thread and a writer need whole cores)")
	fs.StringVar(&f.Memory, "memory", "512Mi", "memory per pod, requested and limited alike")
	fs.StringVar(&f.Results, "results", "stdout", "where each pod writes its results stream: stdout (its log) or pvc:CLAIM (a ReadWriteMany claim mounted at /results)")
	fs.DurationVar(&f.Grace, "grace", time.Minute, "time allowed beyond the start and the attack's --max-duration before the Job is stopped (activeDeadlineSeconds)")
	return c
}

func runKubeJob(c *cobra.Command, f *kube.Spec, args []string) error {
	if c.ArgsLenAtDash() != 0 || len(args) == 0 || args[0] != "attack" {
		return usageErr("kube job needs the attack after '--': kube job --shards N -- attack --profile … URL")
	}
	if err := f.Check(); err != nil {
		return usageErr("--%v", err)
	}
	// Parse the attack's command line as attack would, so a mistake is
	// found here rather than in eight pods.
	var af attackFlags
	ac := attackCmd(&af)
	if err := ac.ParseFlags(args[1:]); err != nil {
		return usageErr("the attack after '--': %v", err)
	}
	rest := ac.Flags().Args()
	if len(rest) != 1 {
		return usageErr("the attack after '--' needs exactly one TARGET URL (got %d)", len(rest))
	}
	if err := kube.CheckAttack(rest[0], ac.Flags().Changed); err != nil {
		return usageErr("%v", err)
	}
	budget, err := af.profile.ShardBudget(attack.Options{MaxRequests: af.MaxRequests, Names: flagName}, f.Shards, ac.Flags().Changed("max-requests"))
	if err != nil {
		return usageErr("%v", err)
	}
	attackArgs := args[1:]
	if budget > 0 {
		attackArgs = append([]string{"--max-requests", fmt.Sprint(budget)}, attackArgs...)
		fmt.Fprintf(c.ErrOrStderr(), "kube job: each pod gets --max-requests %d, its share of the plan (the default %d would cut it short)\n", budget, attack.DefaultMaxRequests)
	}
	startAt := time.Now().Add(f.StartIn).UTC().Truncate(time.Millisecond)
	return f.Job(attackArgs, startAt, deriveRunID(ac, rest[0], startAt), af.MaxDuration).Write(c.OutOrStdout())
}
