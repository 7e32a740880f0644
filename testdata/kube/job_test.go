package kube

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ratecheck/ratecheck/cmd"
)

// manifest runs `ratecheck kube job args…` in process and returns the
// manifest it printed.
func manifest(t *testing.T, args ...string) string {
	t.Helper()
	var out, errs bytes.Buffer
	if code := cmd.Run(context.Background(), append([]string{"kube", "job"}, args...), &out, &errs); code != cmd.ExitOK {
		t.Fatalf("kube job %q: exit %d: %s", args, code, errs.String())
	}
	return out.String()
}

func argAfter(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// The manifest is a valid Indexed Job whose pods each run one shard of the
// attack, bounded and unprivileged.
func TestKubeJobIsAnIndexedJobOfShards(t *testing.T) {
	job := DecodeJob(t, manifest(t, "--shards", "8", "--start-in", "60s", "--image", "reg.example/ratecheck:v1", "--namespace", "load",
		"--", "attack", "--profile", "steady", "--rate", "40000/s", "--duration", "60s", "http://gateway.internal/"))
	s := job.Spec
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || job.Namespace != "load" || !strings.HasPrefix(job.Name, "ratecheck-") {
		t.Errorf("type/meta %+v %+v", job.TypeMeta, job.ObjectMeta)
	}
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != 8 || *s.Parallelism != 8 {
		t.Errorf("not an Indexed Job of 8: mode %v completions %v parallelism %v", s.CompletionMode, s.Completions, s.Parallelism)
	}
	// start-in 60 s + the attack's default time budget 2 min + grace 1 min
	if *s.BackoffLimit != 0 || *s.ActiveDeadlineSeconds != 240 {
		t.Errorf("backoffLimit %d, activeDeadlineSeconds %d", *s.BackoffLimit, *s.ActiveDeadlineSeconds)
	}
	pod := s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || pod.SecurityContext == nil || !*pod.SecurityContext.RunAsNonRoot || len(pod.Containers) != 1 {
		t.Fatalf("pod spec %+v", pod)
	}
	c := pod.Containers[0]
	if c.Image != "reg.example/ratecheck:v1" || c.SecurityContext == nil || *c.SecurityContext.AllowPrivilegeEscalation || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Errorf("container %+v", c)
	}
	if c.Resources.Limits.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() || !c.Resources.Limits.Cpu().Equal(*c.Resources.Requests.Cpu()) {
		t.Errorf("resources %+v", c.Resources)
	}
	if argAfter(c.Args, "--shard") != "auto/8" || argAfter(c.Args, "--run-id") != job.Labels["ratecheck/run-id"] || c.Args[0] != "attack" {
		t.Errorf("args %q", c.Args)
	}
}

func TestKubeJobResultsOnAVolume(t *testing.T) {
	pod := DecodeJob(t, manifest(t, "--shards", "2", "--results", "pvc:runs", "--", "attack", "--profile", "burst", "--burst", "1000", "--max-conns", "2000", "https://api.internal/")).Spec.Template.Spec
	c := pod.Containers[0]
	if len(pod.Volumes) != 1 || pod.Volumes[0].PersistentVolumeClaim.ClaimName != "runs" || len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/results" ||
		!strings.HasSuffix(argAfter(c.Args, "--out"), "-index-$(JOB_COMPLETION_INDEX).jsonl") {
		t.Errorf("volume %+v, mounts %+v, args %q", pod.Volumes, c.VolumeMounts, c.Args)
	}
}

// The longest --name the command accepts is a Job name Kubernetes takes.
func TestKubeJobLongestNameDecodes(t *testing.T) {
	name := "r" + strings.Repeat("0", 60)
	if job := DecodeJob(t, manifest(t, "--shards", "8", "--name", name, "--", "attack", "--profile", "burst", "http://x/")); job.Name != name {
		t.Errorf("name %q, want %q", job.Name, name)
	}
}
