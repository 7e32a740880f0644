package kube

import (
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// In a pod of the Job, the index maps to K = index+1.
func TestShardFromJobCompletionIndex(t *testing.T) {
	for _, c := range []struct {
		flag string
		env  map[string]string
		want results.Shard
	}{
		{"auto/4", map[string]string{"JOB_COMPLETION_INDEX": "0"}, results.Shard{K: 1, N: 4}},
		{"auto", map[string]string{"JOB_COMPLETION_INDEX": "3", "RATECHECK_SHARDS": "4"}, results.Shard{K: 4, N: 4}},
		{"", map[string]string{"JOB_COMPLETION_INDEX": "1", "RATECHECK_SHARDS": "2"}, results.Shard{K: 2, N: 2}},
		{"", map[string]string{"JOB_COMPLETION_INDEX": "1"}, results.Shard{}}, // a Job that is not ratecheck's sharding
		{"2/3", map[string]string{"JOB_COMPLETION_INDEX": "0"}, results.Shard{K: 2, N: 3}},
	} {
		got, err := PodShard(c.flag, func(k string) string { return c.env[k] })
		if err != nil || got != c.want {
			t.Errorf("--shard %q with %v: %v, %v; want %v", c.flag, c.env, got, err, c.want)
		}
	}
	if _, err := PodShard("auto/4", func(k string) string { return map[string]string{"JOB_COMPLETION_INDEX": "4"}[k] }); err == nil {
		t.Error("index 4 of 4 accepted")
	}
	if _, err := PodShard("auto", func(string) string { return "" }); err == nil {
		t.Error("auto outside a pod accepted")
	}
}

// The Job runs an attack on a URL every pod reaches, and sets each pod's
// own flags itself.
func TestCheckAttack(t *testing.T) {
	none := func(string) bool { return false }
	if err := CheckAttack("http://gw/", none); err != nil {
		t.Errorf("a URL: %v", err)
	}
	if err := CheckAttack("builtin:none", none); err == nil || !strings.Contains(err.Error(), "would be one per pod") {
		t.Errorf("builtin: %v", err)
	}
	if err := CheckAttack("https://gw/", func(f string) bool { return f == "out" }); err == nil || !strings.Contains(err.Error(), "sets --out") {
		t.Errorf("--out: %v", err)
	}
}

// A pod's plan: its shard from the index, the common start, and the run id
// given or derived from the start; a shard with no start is refused.
func TestPodPlan(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	env := func(k string) string { return map[string]string{EnvJobIndex: "1", EnvShards: "4"}[k] }
	none := func(string) string { return "" }
	derive := func(at time.Time) string { return "id@" + at.Format(time.RFC3339) }
	p, err := PodPlan("auto", "+30s", "", now, env, derive)
	if err != nil || p.Shard != (results.Shard{K: 2, N: 4}) || !p.StartAt.Equal(now.Add(30*time.Second)) || p.RunID != "id@2026-12-01T10:00:30Z" {
		t.Errorf("auto: %+v, %v", p, err)
	}
	if p, err := PodPlan("", "", "", now, none, derive); err != nil || p != (Plan{}) {
		t.Errorf("a whole run now: %+v, %v", p, err)
	}
	if p, err := PodPlan("1/2", "+1s", "mine", now, none, derive); err != nil || p.RunID != "mine" {
		t.Errorf("--run-id given: %+v, %v", p, err)
	}
	for _, c := range []struct{ shard, startAt, want string }{
		{"1/2", "", "--shard 1/2 needs --start-at: the shards of a run start together on a common instant"},
		{"", "yesterday", `--start-at "yesterday": not an RFC 3339 instant`},
		{"a/b", "+1s", "--shard: "},
	} {
		if _, err := PodPlan(c.shard, c.startAt, "", now, none, derive); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("--shard %q --start-at %q: %v; want %q", c.shard, c.startAt, err, c.want)
		}
	}
}
