package kube

import (
	"strings"
	"testing"

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
