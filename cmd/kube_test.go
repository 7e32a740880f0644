package cmd

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratecheck/ratecheck/attack/kube"
	"github.com/ratecheck/ratecheck/results"
)

func argAfter(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// jobArgs is what a manifest's one container runs, the run-id label and
// the Job's name, read with the YAML library the manifest is written with. The manifest
// as Kubernetes reads it (strictly decoded into batch/v1 Job) is checked in
// testdata/kube, a module of its own, so that Kubernetes' modules stay out
// of this one.
func jobArgs(t *testing.T, manifest string) (args []string, runID, name string) {
	t.Helper()
	var job struct {
		Metadata struct {
			Name   string
			Labels map[string]string
		}
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct{ Args []string }
				}
			}
		}
	}
	if err := yaml.Unmarshal([]byte(manifest), &job); err != nil || len(job.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("manifest (%v):\n%s", err, manifest)
	}
	return job.Spec.Template.Spec.Containers[0].Args, job.Metadata.Labels["ratecheck/run-id"], job.Metadata.Name
}

// The manifest's pods each run one shard of the attack, starting on one
// concrete instant.
func TestKubeJobIsAnIndexedJobOfShards(t *testing.T) {
	before := time.Now()
	code, out, errs := runCmd(t, "kube", "job", "--shards", "8", "--start-in", "60s", "--image", "reg.example/ratecheck:v1", "--namespace", "load",
		"--", "attack", "--profile", "steady", "--rate", "40000/s", "--duration", "60s", "http://gateway.internal/")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	args, runID, _ := jobArgs(t, out)
	// --start-in became a concrete instant, 60 s from when the command ran.
	at, err := time.Parse(time.RFC3339Nano, argAfter(args, "--start-at"))
	if err != nil || at.Before(before.Add(59*time.Second)) || at.After(time.Now().Add(61*time.Second)) {
		t.Errorf("--start-at %q (%v)", argAfter(args, "--start-at"), err)
	}
	if argAfter(args, "--shard") != "auto/8" || argAfter(args, "--out") != "/dev/stdout" || argAfter(args, "--max-requests") != "300000" ||
		argAfter(args, "--run-id") != runID || args[0] != "attack" {
		t.Errorf("args %q", args)
	}

	// What pod 3 (index 2) runs: the attack command parses those args and
	// resolves them to shard 3/8 on that instant.
	ac := newAttackCmd()
	if err := ac.ParseFlags(args[1:]); err != nil {
		t.Fatal(err)
	}
	shard, _ := ac.Flags().GetString("shard")
	startAt, _ := ac.Flags().GetString("start-at")
	id, _ := ac.Flags().GetString("run-id")
	env := map[string]string{"JOB_COMPLETION_INDEX": "2", "RATECHECK_SHARDS": "8"}
	plan, err := kube.PodPlan(shard, startAt, id, before, func(k string) string { return env[k] }, nil)
	if err != nil || plan.Shard != (results.Shard{K: 3, N: 8}) || !plan.StartAt.Equal(at) || plan.RunID != runID {
		t.Errorf("pod index 2 runs %+v (%v)", plan, err)
	}
}

func TestKubeJobRefusals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--shards", "4"}, "needs the attack after '--'"},
		{[]string{"--shards", "0", "--", "attack", "http://x/"}, "--shards must be ≥ 1"},
		{[]string{"--shards", "4", "--", "attack", "--shard", "1/4", "http://x/"}, "sets --shard: kube job sets it"},
		{[]string{"--shards", "4", "--", "attack", "--profile", "burst", "builtin:none"}, "must be an http(s) URL"},
		{[]string{"--shards", "4", "--", "attack", "--bogus", "http://x/"}, "unknown flag: --bogus"},
		{[]string{"--shards", "4", "--cpu", "lots", "--", "attack", "--profile", "burst", "http://x/"}, "--cpu \"lots\" is not a positive Kubernetes quantity"},
		{[]string{"--shards", "4", "--cpu", "-1", "--", "attack", "--profile", "burst", "http://x/"}, "--cpu \"-1\" is not a positive Kubernetes quantity"},
		{[]string{"--shards", "4", "--cpu", "0m", "--", "attack", "--profile", "burst", "http://x/"}, "--cpu \"0m\" is not a positive"},
		{[]string{"--shards", "4", "--memory", "-512Mi", "--", "attack", "--profile", "burst", "http://x/"}, "--memory \"-512Mi\" is not a positive Kubernetes quantity"},
		{[]string{"--shards", "4", "--memory", "512MB", "--", "attack", "--profile", "burst", "http://x/"}, "--memory \"512MB\" is not a positive"},
		{[]string{"--shards", "4", "--name", "Bad_Name!", "--", "attack", "--profile", "burst", "http://x/"}, "--name \"Bad_Name!\": a Job name must be a DNS-1123 label"},
		{[]string{"--shards", "4", "--name", "load-", "--", "attack", "--profile", "burst", "http://x/"}, "starting and ending with a letter or digit"},
		{[]string{"--shards", "4", "--namespace", "Load", "--", "attack", "--profile", "burst", "http://x/"}, "--namespace \"Load\": a namespace is a DNS-1123 label"},
		{[]string{"--shards", "4", "--results", "pvc:", "--", "attack", "--profile", "burst", "http://x/"}, "--results \"pvc:\": use stdout or pvc:CLAIM"},
		{[]string{"--shards", "4", "--", "attack", "--profile", "steady", "--rate", "1000/s", "--duration", "60s", "--max-requests", "100", "http://x/"}, "raise it to 15000"},
	} {
		code, out, errs := runCmd(t, append([]string{"kube", "job"}, c.args...)...)
		if code != ExitUsage || !strings.Contains(errs, c.want) || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2, no manifest and one line with %q", c.args, code, out, errs, c.want)
		}
	}
}

// The Job controller names each pod's host NAME-INDEX, a DNS label of at
// most 63: the longest --name leaves room for the last index.
func TestKubeJobNameLeavesRoomForThePodIndex(t *testing.T) {
	for _, c := range []struct {
		shards, longest int
	}{{8, 61}, {11, 60}, {1, 61}} {
		job := func(name string) (int, string, string) {
			return runCmd(t, "kube", "job", "--shards", fmt.Sprint(c.shards), "--name", name, "--", "attack", "--profile", "burst", "http://x/")
		}
		fits := "r" + strings.Repeat("0", c.longest-1)
		code, out, errs := job(fits)
		if code != ExitOK {
			t.Fatalf("%d shards, a name of %d: exit %d, %s", c.shards, c.longest, code, errs)
		}
		if _, _, name := jobArgs(t, out); name != fits {
			t.Errorf("%d shards, a name of %d: exit %d, %s", c.shards, c.longest, code, errs)
		}
		code, _, errs = job(fits + "0")
		want := fmt.Sprintf("use at most %d for the name", c.longest)
		if code != ExitUsage || !strings.Contains(errs, want) {
			t.Errorf("%d shards, a name of %d: exit %d, %q; want exit 2 with %q", c.shards, c.longest+1, code, errs, want)
		}
	}
}

// kubectl's order: the type, the metadata, then the spec; no status.
func TestKubeJobReadsInKubernetesOrder(t *testing.T) {
	_, out, _ := runCmd(t, "kube", "job", "--shards", "2", "--", "attack", "--profile", "burst", "http://x/")
	if !strings.HasPrefix(out, "apiVersion: batch/v1\nkind: Job\nmetadata:\n") || strings.Index(out, "\nspec:\n") < strings.Index(out, "\nmetadata:") ||
		strings.Contains(out, "status:") || !strings.Contains(out, "\n      - name: ratecheck\n") {
		t.Errorf("manifest:\n%s", out)
	}
}

// Kubernetes' Go modules serve only testdata/kube's tests: the manifest is
// written without them, so every user's binary goes without some 11 MB. Nor does
// the binary link html/template (12 MB with it).
func TestKubeNotLinkedIntoTheBinary(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the binary's packages")
	}
	out, err := exec.Command(gobin, "list", "-deps", "github.com/ratecheck/ratecheck").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "k8s.io/") || strings.HasPrefix(pkg, "sigs.k8s.io/") {
			t.Errorf("the binary links %s", pkg)
		}
		// html/template calls methods by a name known at run time, and
		// with that reachable the linker keeps every exported method of
		// every type in an interface: go-redis's commands alone were
		// 3.6 MB of the binary (report/html.go says more).
		if pkg == "html/template" {
			t.Errorf("the binary links %s: the linker then keeps every exported method", pkg)
		}
	}
}

// kube and kube job show how they are used.
func TestKubeHelpHasExamples(t *testing.T) {
	for _, cmd := range [][]string{{"kube", "--help"}, {"kube", "job", "--help"}} {
		code, out, _ := runCmd(t, cmd...)
		if code != ExitOK || !strings.Contains(out, "Examples:\n  ratecheck kube job --shards") || !strings.Contains(out, "| kubectl apply -f -") {
			t.Errorf("%q: exit %d\n%s", cmd, code, out)
		}
	}
}

// --shard specs that are not K/N with 1 ≤ K ≤ N are exit 2, as is a shard
// without a common start or a sharded boundary without --limit/--window.
func TestAttackShardFlagsRefused(t *testing.T) {
	soon := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--shard", "0/3", "--start-at", soon}, "K counts from 1 to N=3"},
		{[]string{"--shard", "4/3", "--start-at", soon}, "K counts from 1 to N=3"},
		{[]string{"--shard", "a/b", "--start-at", soon}, "not K/N"},
		{[]string{"--shard", "1/2"}, "needs --start-at"},
		{[]string{"--shard", "auto", "--start-at", soon}, "$JOB_COMPLETION_INDEX"},
		{[]string{"--start-at", "yesterday"}, "not an RFC 3339 instant"},
		{[]string{"--start-at", "2001-01-01T00:00:00Z"}, "in the past"},
		{[]string{"--profile", "boundary", "--shard", "1/2", "--start-at", soon}, "needs --limit and --window"},
	} {
		args := append([]string{"attack", "--profile", "burst", "--quiet", "--out", t.TempDir() + "/r.jsonl"}, c.args...)
		code, _, errs := runCmd(t, append(args, "http://127.0.0.1:1/")...)
		if code != ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, %q; want exit 2 with %q", c.args, code, errs, c.want)
		}
	}
}

// Every shard derives the same run id from its own command line; another
// plan or another instant derives another.
func TestDerivedRunIDIsSharedByTheShards(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	id := func(at time.Time, args ...string) string {
		ac := newAttackCmd()
		if err := ac.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		return deriveRunID(ac, "http://x/", at)
	}
	one := id(at, "--profile", "steady", "--rate", "100/s", "--shard", "1/4", "--out", "run-1.jsonl")
	if two := id(at, "--out", "run-2.jsonl", "--shard", "2/4", "--rate", "100/s", "--profile", "steady", "--quiet"); two != one {
		t.Errorf("shards 1 and 2 derive %s and %s", one, two)
	}
	if other := id(at, "--profile", "steady", "--rate", "200/s", "--shard", "1/4"); other == one {
		t.Error("another rate derives the same id")
	}
	if later := id(at.Add(time.Second), "--profile", "steady", "--rate", "100/s", "--shard", "1/4"); later == one {
		t.Error("another start instant derives the same id")
	}
}
