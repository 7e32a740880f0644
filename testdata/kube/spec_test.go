package kube

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ratecheck/ratecheck/attack/kube"
)

// Quantities as Kubernetes reads them: each is accepted as a positive
// --cpu/--memory exactly when resource.ParseQuantity parses it above zero.
var kubeQuantities = []string{
	"2", "1500m", "0.5", ".5", "1.", "+1", "007", "1e3", "1E3", "1e-3", "5E-1", "1e+3", "512Mi", "1Gi", "1.5Gi", "1Ei", "1E",
	"1.Ki", "1.e3", "100n", "1u", "0.0000000001", "99999999999999999999", "1k", "2T", "3P",
	"", "0", "-1", "-512Mi", "0m", "0.0", "00", "-0", "+0.0", "+", "-", ".", "lots", "512MB", "1mi", "1ki", "1KI", "1K",
	"1e", "1e+", "1E-", "1.5.5", "1 ", " 1", "0x10", "1_000", "1e3.5", "1Ki3", "2 cores", "1e99999999999999999999", "1m1", "m", "Mi",
}

func kubernetesPositive(s string) bool {
	q, err := resource.ParseQuantity(s)
	return err == nil && q.Sign() > 0
}

// acceptedAsCPU and acceptedAsMemory: whether ratecheck's Spec.Check takes
// s as the pod's --cpu, and as its --memory.
func acceptedAsCPU(s string) bool {
	return kube.Spec{Shards: 1, StartIn: time.Minute, CPU: s, Memory: "1Gi", Results: "stdout"}.Check() == nil
}

func acceptedAsMemory(s string) bool {
	return kube.Spec{Shards: 1, StartIn: time.Minute, CPU: "1", Memory: s, Results: "stdout"}.Check() == nil
}

func TestKubeQuantityAsKubernetesReadsIt(t *testing.T) {
	for _, s := range kubeQuantities {
		want := kubernetesPositive(s)
		if got := acceptedAsCPU(s); got != want {
			t.Errorf("--cpu %q: accepted %v, Kubernetes parses it positive %v", s, got, want)
		}
		if got := acceptedAsMemory(s); got != want {
			t.Errorf("--memory %q: accepted %v, Kubernetes parses it positive %v", s, got, want)
		}
	}
}

func FuzzKubeQuantity(f *testing.F) {
	for _, s := range kubeQuantities {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsAny(s, "eE") && len(s) > 8 {
			t.Skip("a long exponent: ParseQuantity would build a number of that many digits")
		}
		if got, want := acceptedAsCPU(s), kubernetesPositive(s); got != want {
			t.Errorf("%q: accepted %v, Kubernetes parses it positive %v", s, got, want)
		}
	})
}

// The manifest is read by kubectl's YAML (sigs.k8s.io/yaml, YAML 1.1):
// every string the user gives comes back a string, unchanged, however much
// it looks like a number, a boolean, a date or a null.
func TestKubeManifestStringsSurviveKubectl(t *testing.T) {
	tricky := []string{"yes", "no", "on", "off", "y", "N", "true", "null", "~", "", "1_000", "0b101", "0x1F", "0o17", "017", "1e3", ".inf", "-.5",
		"1:20", "2026-12-01", "2026-12-01T10:00:00Z", "X-Opt: yes", "#not a comment", "- item", "[1]", "{a: 1}", "*alias", "&anchor", "!tag", "|", ">",
		"@", "`", "'", "\"", "line\nbreak", " padded ", "é", "$(JOB_COMPLETION_INDEX)"}
	s := kube.Spec{Shards: 2, Image: "yes", Namespace: "on", Name: "y", CPU: "1e3", Memory: "017", Results: "pvc:0x1F", StartIn: time.Minute, Grace: time.Minute}
	var b bytes.Buffer
	if err := s.Job(tricky, time.Now(), "1_000", time.Minute).Write(&b); err != nil {
		t.Fatal(err)
	}
	job := DecodeJob(t, b.String())
	c := job.Spec.Template.Spec.Containers[0]
	if got := c.Args[len(c.Args)-len(tricky):]; !slices.Equal(got, tricky) {
		t.Errorf("args came back %q\n%s", got, b.String())
	}
	if c.Image != "yes" || job.Namespace != "on" || job.Name != "y" || job.Labels["ratecheck/run-id"] != "1_000" ||
		c.Resources.Limits.Cpu().Value() != 1000 || c.Resources.Requests.Memory().Value() != 17 || job.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "0x1F" {
		t.Errorf("a field changed type on the way:\n%s", b.String())
	}
}

// Each pod runs its shard of the attack, on the common instant, writing
// where the results go; the Job ends by the run's own budget.
func TestJobRunsTheShards(t *testing.T) {
	s := kube.Spec{Shards: 3, StartIn: time.Minute, Grace: time.Minute, Image: "img", CPU: "2", Memory: "1Gi", Results: "pvc:runs"}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	if err := s.Job([]string{"--profile", "burst", "http://x/"}, at, "abc", 2*time.Minute).Write(&b); err != nil {
		t.Fatal(err)
	}
	job := DecodeJob(t, b.String())
	c := job.Spec.Template.Spec.Containers[0]
	want := []string{"attack", "--quiet", "--shard", "auto/3", "--start-at", "2026-12-01T10:00:00Z", "--run-id", "abc",
		"--out", "/results/abc-index-$(JOB_COMPLETION_INDEX).jsonl", "--profile", "burst", "http://x/"}
	if !slices.Equal(c.Args, want) || job.Name != "ratecheck-abc" || *job.Spec.ActiveDeadlineSeconds != 240 || c.Env[0].Name != kube.EnvShards || c.Env[0].Value != "3" {
		t.Errorf("job %s: args %q", job.Name, c.Args)
	}
}
