package cmd

import (
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/attack/kube"
	"github.com/ratecheck/ratecheck/results"
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
	fs.StringVar(&f.shard, "shard", "", "run part K of N of the plan (K from 1, e.g. 2/4); 'auto' or 'auto/N' takes K from $"+kube.EnvJobIndex+"+1 (a Kubernetes Indexed Job) and N from $"+kube.EnvShards)
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
	if p.shard, err = kube.PodShard(f.shard, getenv); err != nil {
		return p, usageErr("%v", err)
	}
	if p.startAt, err = attack.ParseStartAt(f.startAt, now); err != nil {
		return p, usageErr("--start-at %v", err)
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

// flagsNotInRunID differ between the shards of one run, or do not change
// what is sent.
var flagsNotInRunID = map[string]bool{"shard": true, "run-id": true, "start-at": true, "out": true, "quiet": true, "output": true,
	"html": true, "json": true, "junit": true, "source-addrs": true}

// deriveRunID is the run id of the flags every shard shares (attack.RunID).
func deriveRunID(c *cobra.Command, spec string, startAt time.Time) string {
	var settings []string
	c.Flags().Visit(func(fl *pflag.Flag) {
		if !flagsNotInRunID[fl.Name] {
			settings = append(settings, fl.Name+"="+fl.Value.String())
		}
	})
	return attack.RunID(settings, spec, startAt)
}

// hostname names this machine in a shard's header ("" if unknown).
func hostname() string {
	h, _ := os.Hostname()
	return h
}
