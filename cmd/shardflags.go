package cmd

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratecheck/ratecheck/attack/kube"
	"github.com/ratecheck/ratecheck/results"
)

// The environment of a pod of the Job 'ratecheck kube job' prints.
const (
	envJobIndex = kube.EnvJobIndex
	envShards   = kube.EnvShards
)

// shardFlags split one attack across processes (README: "Beyond one
// machine").
type shardFlags struct {
	shard   string
	startAt string
	runID   string
}

func (f *shardFlags) register(c *cobra.Command) {
	fs := c.Flags()
	fs.StringVar(&f.shard, "shard", "", "run part K of N of the plan (K from 1, e.g. 2/4); 'auto' or 'auto/N' takes K from $"+envJobIndex+"+1 (a Kubernetes Indexed Job) and N from $"+envShards)
	fs.StringVar(&f.startAt, "start-at", "", "start on this wall-clock instant (RFC 3339, e.g. 2026-12-01T10:00:00Z, or +30s from now): the shards' common start")
	fs.StringVar(&f.runID, "run-id", "", "the id every shard of one run records (default: derived from the command line and --start-at, so every shard computes the same)")
}

// shardPlan is what the shard flags resolve to.
type shardPlan struct {
	shard   results.Shard // zero: the whole run
	startAt time.Time     // zero: now
	runID   string        // "" when neither sharded nor started at an instant
}

// resolve reads the flags (and, for --shard auto, the environment). now
// anchors a relative --start-at.
func (f *shardFlags) resolve(c *cobra.Command, spec string, now time.Time, getenv func(string) string) (shardPlan, error) {
	var p shardPlan
	var err error
	if p.shard, err = f.parseShard(getenv); err != nil {
		return p, err
	}
	if p.startAt, err = parseStartAt(f.startAt, now); err != nil {
		return p, err
	}
	if !p.shard.Whole() && p.startAt.IsZero() {
		return p, usageErr("--shard %s needs --start-at: the shards of a run start together on a common instant", p.shard)
	}
	p.runID = f.runID
	if p.runID == "" && (!p.shard.Whole() || !p.startAt.IsZero()) {
		p.runID = deriveRunID(c, spec, p.startAt)
	}
	return p, nil
}

func (f *shardFlags) parseShard(getenv func(string) string) (results.Shard, error) {
	v := f.shard
	if v == "" && getenv(envJobIndex) != "" && getenv(envShards) != "" {
		v = "auto" // a pod of the Job the manifest describes
	}
	if v == "" {
		return results.Shard{}, nil
	}
	if rest, ok := strings.CutPrefix(v, "auto"); ok {
		idx := getenv(envJobIndex)
		i, err := strconv.Atoi(idx)
		if idx == "" || err != nil || i < 0 {
			return results.Shard{}, usageErr("--shard %s takes K from $%s (a Kubernetes Indexed Job's pod index), which is %q here: give --shard K/N", v, envJobIndex, idx)
		}
		n := strings.TrimPrefix(rest, "/")
		if rest == "" {
			if n = getenv(envShards); n == "" {
				return results.Shard{}, usageErr("--shard auto needs the shard count: --shard auto/N, or $%s", envShards)
			}
		}
		v = strconv.Itoa(i+1) + "/" + n
	}
	s, err := results.ParseShard(v)
	if err != nil {
		return results.Shard{}, usageErr("--shard: %v", err)
	}
	return s, nil
}

// parseStartAt reads an RFC 3339 instant, or +DURATION from now.
func parseStartAt(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if rel, ok := strings.CutPrefix(v, "+"); ok {
		d, err := time.ParseDuration(rel)
		if err != nil || d <= 0 {
			return time.Time{}, usageErr("--start-at %q: a relative start is +DURATION, e.g. +30s", v)
		}
		return now.Add(d).Round(0), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, usageErr("--start-at %q: not an RFC 3339 instant (e.g. 2026-12-01T10:00:00Z) nor +DURATION", v)
	}
	if !t.After(now) {
		return time.Time{}, usageErr("--start-at %s is %s in the past: give a later instant", v, now.Sub(t).Round(time.Millisecond))
	}
	return t, nil
}

// flagsNotInRunID differ between the shards of one run, or do not change
// what is sent.
var flagsNotInRunID = map[string]bool{"shard": true, "run-id": true, "start-at": true, "out": true, "quiet": true, "output": true,
	"html": true, "json": true, "junit": true, "source-addrs": true}

// deriveRunID hashes what every shard of a run shares: the target, the
// flags that shape the traffic, and the resolved start instant.
func deriveRunID(c *cobra.Command, spec string, startAt time.Time) string {
	var parts []string
	c.Flags().Visit(func(fl *pflag.Flag) {
		if !flagsNotInRunID[fl.Name] {
			parts = append(parts, fl.Name+"="+fl.Value.String())
		}
	})
	sort.Strings(parts)
	parts = append(parts, "target="+spec, "start="+startAt.UTC().Format(time.RFC3339Nano))
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:6])
}

// hostname names this machine in a shard's header ("" if unknown).
func hostname() string {
	h, _ := os.Hostname()
	return h
}
