package cmd

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/attack/kube"
	"github.com/ratecheck/ratecheck/outfiles"
	"github.com/ratecheck/ratecheck/report"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/runner"
	"github.com/ratecheck/ratecheck/targets/launch"
)

type attackFlags struct {
	requestFlags
	profile  attack.ProfileSpec
	maxConns int
	shards   shardFlags    // attack only
	shard    results.Shard // resolved from shards before buildProfile
}

func newAttackCmd() *cobra.Command { return attackCmd(&attackFlags{}) }

// attackCmd is the attack command, its flags read into f.
func attackCmd(f *attackFlags) *cobra.Command {
	c := &cobra.Command{
		Use:   "attack --profile PROFILE TARGET",
		Short: "Fire an attack profile at a target and report what the limiter did",
		Long: `attack fires one profile at TARGET (an http(s) URL or builtin:ALGO?...), streams
every request to a results file as it completes (compact .rcs; --out FILE.jsonl
for JSON Lines), and prints a short table and a one-line verdict.

Profiles:
  steady    constant rate for a duration (--rate, --duration); --rate max with
            --connections N measures maximum throughput
  burst     idle, then --burst K requests released at one instant; optional
            --tail recovery trace at --tail-rate
  boundary  the fixed-window straddle: L just before a boundary, L just after
  storm     --clients naive clients retrying at once until --goal successes
  backoff   the same clients with full-jitter exponential backoff, honouring
            Retry-After unless --no-retry-after

Beyond one machine: --shard K/N --start-at TIME runs part K of N of the plan,
starting on a common wall-clock instant; run every shard (on N hosts, or N
processes) and merge their streams with 'ratecheck report'. 'ratecheck kube
job' prints a Kubernetes Indexed Job that does it.`,
		Example: `  ratecheck attack --profile boundary 'builtin:fixed_window?limit=20&window=2s'
  ratecheck attack --profile burst --burst 100 --idle 3s --tail 5s http://127.0.0.1:8080/
  ratecheck attack --profile steady --rate 50/s --duration 10s -o json http://127.0.0.1:8080/
  ratecheck attack --profile storm --clients 50 --goal 5 'builtin:token_bucket?rate=50/s&burst=10'
  ratecheck attack --profile backoff --clients 50 --goal 5 'builtin:token_bucket?rate=50/s&burst=10'
  ratecheck attack --profile burst --burst 400 --idle 1s --shard 2/4 --start-at 2026-12-01T10:00:00Z --out run-2.jsonl http://10.0.0.5/`,
		Args: exactArgs(1, "a TARGET (URL or builtin:...)"),
		RunE: func(c *cobra.Command, args []string) error { return runAttack(c, f, args[0]) },
	}
	f.register(c)
	f.shards.register(c)
	registerOutputFlags(c)
	f.registerProfileFlags(c, profileDefaults{profileUsage: " (required)", burst: 100, idle: 3 * time.Second})
	return c
}

// flagNames are the flags that set each field the attack package names in
// its messages (attack.Options.Names), so a user reads the flag to change.
var flagNames = map[string]string{
	"Options.Timeout":         "--timeout",
	"Options.MaxRequests":     "--max-requests",
	"Options.MaxDuration":     "--max-duration",
	"Options.MaxConns":        "--max-conns",
	"ProbeSpec.MaxTime":       "--max-time",
	"RequestSpec.Methods":     "--bypass-methods",
	"RequestSpec.Keys":        "--keys",
	"RequestSpec.KeyHeader":   "--key-header",
	"RequestSpec.SourceAddrs": "--source-addrs",
	"TLSOptions.CACertFile":   "--cacert",
	"TLSOptions.CertFile":     "--cert",
	"TLSOptions.KeyFile":      "--key",
	"ProfileSpec.Name":        "--profile",
	"Steady.Rate":             "--rate",
	"Steady.Duration":         "--duration",
	"Steady.Conns":            "--connections",
	"Burst.K":                 "--burst",
	"Burst.Idle":              "--idle",
	"Burst.Tail":              "--tail",
	"Burst.TailRate":          "--tail-rate",
	"Boundary.Limit":          "--limit",
	"Boundary.Window":         "--window",
	"Boundary.Gap":            "--gap",
	"Clients.N":               "--clients",
	"Clients.Goal":            "--goal",
	"RunOptions.Out":          "--out",
	"RunOptions.Shard":        "--shard",
	"RunOptions.StartAt":      "--start-at",
}

// flagName is attack.Options.Names for the command line.
func flagName(field string) string { return flagNames[field] }

// profileDefaults are where attack and compare differ: compare defaults to
// a short burst with a recovery tail so that several targets run quickly.
type profileDefaults struct {
	profile, profileUsage string
	burst                 int
	idle, tail            time.Duration
}

// registerProfileFlags adds every profile's flags, shared by attack and
// compare.
func (f *attackFlags) registerProfileFlags(c *cobra.Command, d profileDefaults) {
	fs := c.Flags()
	p := &f.profile
	fs.StringVar(&p.Name, "profile", d.profile, "attack profile: "+strings.Join(attack.ProfileNames(), ", ")+d.profileUsage)
	fs.StringVar(&p.Rate, "rate", "50/s", "steady: request rate (10/s, 600/m) or max")
	fs.DurationVar(&p.Steady.Duration, "duration", 10*time.Second, "steady: how long to send")
	fs.IntVar(&p.Steady.Conns, "connections", 50, "steady --rate max: closed-loop connections")
	fs.IntVar(&p.Burst.K, "burst", d.burst, "burst: requests released at one instant")
	fs.DurationVar(&p.Burst.Idle, "idle", d.idle, "burst: idle time before the burst")
	fs.DurationVar(&p.Burst.Tail, "tail", d.tail, "burst: recovery trace length after the burst (0 = none)")
	fs.StringVar(&p.TailRate, "tail-rate", "20/s", "burst: recovery trace rate")
	fs.IntVar(&p.Boundary.Limit, "limit", 0, "boundary: the limit L (0 = learn from headers or by probing)")
	fs.DurationVar(&p.Boundary.Window, "window", 0, "boundary: the window W (0 = learn from headers or by probing)")
	fs.DurationVar(&p.Boundary.Gap, "gap", 0, "boundary: poll interval when locating the boundary (0 = W/200)")
	fs.IntVar(&p.Clients.N, "clients", 50, "storm/backoff: number of clients")
	fs.IntVar(&p.Clients.Goal, "goal", 5, "storm/backoff: successes each client wants")
	fs.DurationVar(&p.Clients.Base, "base", 100*time.Millisecond, "backoff: base delay")
	fs.DurationVar(&p.Clients.Cap, "cap", 10*time.Second, "backoff: maximum delay")
	fs.BoolVar(&p.Clients.IgnoreRetryAfter, "no-retry-after", false, "backoff: ignore Retry-After")
	fs.IntVar(&f.maxConns, "max-conns", attack.DefaultMaxConns,
		fmt.Sprintf("connections open at once (requests in flight); a burst needs one per request (at most %d)", attack.ConnsCeiling))
	_ = c.RegisterFlagCompletionFunc("profile", cobra.FixedCompletions(attack.ProfileNames(), cobra.ShellCompDirectiveNoFileComp))
}

// buildProfile builds the profile the flags describe and checks it against
// the budgets (attack.ProfileSpec), so a run that cannot be made is exit 2
// before anything is sent.
func (f *attackFlags) buildProfile() (attack.Profile, error) {
	f.profile.Clients.KeyPerClient = f.KeyHeader != "" // each client its own key
	p, err := f.profile.Build(f.options(), f.shard)
	if err != nil {
		return nil, usageErr("%w", err)
	}
	return p, nil
}

// options are the engine options the flags set: the request flags' and
// --max-conns (compare's profile runs get them through its embedding).
func (f *attackFlags) options() attack.Options {
	o := f.Options()
	o.MaxConns = f.maxConns
	return o
}

func runAttack(c *cobra.Command, f *attackFlags, spec string) error {
	if err := f.validate(); err != nil {
		return err
	}
	plan, err := kube.PodPlan(f.shards.shard, f.shards.startAt, f.shards.runID, time.Now(), os.Getenv,
		func(at time.Time) string { return deriveRunID(c, spec, at) })
	if err != nil {
		return usageErr("%v", err)
	}
	f.shard = plan.Shard
	prof, err := f.buildProfile()
	if err != nil {
		return err
	}
	if err := launch.RefuseSimulated(spec); err != nil {
		return usageErr("%v", err)
	}
	path := outfiles.StreamPath("attack", f.out, time.Now())
	if err := guardStreams(c, []string{path}); err != nil {
		return err
	}
	ctx, tgt, done, err := f.startRun(c, spec)
	if err != nil {
		return err
	}
	defer done()
	opts := map[string]string{}
	c.Flags().Visit(func(fl *pflag.Flag) { opts[fl.Name] = fl.Value.String() })
	res, err := runner.Attack(ctx, tgt, runner.Attacking{Profile: prof, Request: f.Request, Stderr: c.ErrOrStderr(),
		Progress: progressEnabled(c.ErrOrStderr(), f.quiet), Run: attack.RunOptions{Options: f.options(), Out: path,
			Header: results.StreamHeader{Command: "attack", Target: spec, Options: opts, RunID: plan.RunID},
			Shard:  plan.Shard, StartAt: plan.StartAt}})
	if res == nil || !res.Concluded {
		return exitOf(err)
	}
	// The verdict first, then the files: a file that cannot be written
	// must not cost the user the answer (the run is in its stream).
	out := runner.AttackedOf(spec, path, res)
	if err := printAttack(c, f, out); err != nil {
		return err
	}
	if err := writeOutputs(c, out.Document); err != nil {
		return err
	}
	return exitOf(runner.AttackErr(res, err))
}

// printAttack prints the attack's answer on stdout, in the -o format.
func printAttack(c *cobra.Command, f *attackFlags, out runner.Attacked) error {
	if f.output == "json" {
		return printJSON(c.OutOrStdout(), out)
	}
	return report.AttackText(c.OutOrStdout(), out.Report, string(out.Stopped))
}

// exactArgs is cobra.ExactArgs with a message that says what is missing.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr("%s needs %s (got %d arguments); see '%s --help'", c.Name(), what, len(args), c.CommandPath())
		}
		return nil
	}
}

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
