package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/report"
)

type attackFlags struct {
	requestFlags
	profile  string
	rate     string
	duration time.Duration
	conns    int
	burst    int
	idle     time.Duration
	tail     time.Duration
	tailRate string
	limit    int
	window   time.Duration
	gap      time.Duration
	clients  int
	goal     int
	base     time.Duration
	cap      time.Duration
	noRA     bool
}

func newAttackCmd() *cobra.Command {
	var f attackFlags
	c := &cobra.Command{
		Use:   "attack --profile PROFILE TARGET",
		Short: "Fire an attack profile at a target and report what the limiter did",
		Long: `attack fires one profile at TARGET (an http(s) URL or builtin:ALGO?...), streams
every request to a JSON Lines results file as it completes, and prints a short
table and a one-line verdict.

Profiles:
  steady    constant rate for a duration (--rate, --duration); --rate max with
            --connections N measures maximum throughput
  burst     idle, then --burst K requests released at one instant; optional
            --tail recovery trace at --tail-rate
  boundary  the fixed-window straddle: L just before a boundary, L just after
  storm     --clients naive clients retrying at once until --goal successes
  backoff   the same clients with full-jitter exponential backoff, honouring
            Retry-After unless --no-retry-after`,
		Example: `  ratecheck attack --profile boundary 'builtin:fixed_window?limit=20&window=2s'
  ratecheck attack --profile burst --burst 100 --idle 3s --tail 5s http://127.0.0.1:8080/
  ratecheck attack --profile steady --rate 50/s --duration 10s -o json http://127.0.0.1:8080/
  ratecheck attack --profile storm --clients 50 --goal 5 'builtin:token_bucket?rate=50/s&burst=10'
  ratecheck attack --profile backoff --clients 50 --goal 5 'builtin:token_bucket?rate=50/s&burst=10'`,
		Args: exactArgs(1, "a TARGET (URL or builtin:...)"),
		RunE: func(c *cobra.Command, args []string) error { return runAttack(c, &f, args[0]) },
	}
	f.register(c)
	registerTargetFlags(c)
	registerOutputFlags(c)
	f.registerProfileFlags(c, profileDefaults{profileUsage: " (required)", burst: 100, idle: 3 * time.Second})
	return c
}

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
	fs.StringVar(&f.profile, "profile", d.profile, "attack profile: "+strings.Join(attack.Profiles, ", ")+d.profileUsage)
	fs.StringVar(&f.rate, "rate", "50/s", "steady: request rate (10/s, 600/m) or max")
	fs.DurationVar(&f.duration, "duration", 10*time.Second, "steady: how long to send")
	fs.IntVar(&f.conns, "connections", 50, "steady --rate max: closed-loop connections")
	fs.IntVar(&f.burst, "burst", d.burst, "burst: requests released at one instant")
	fs.DurationVar(&f.idle, "idle", d.idle, "burst: idle time before the burst")
	fs.DurationVar(&f.tail, "tail", d.tail, "burst: recovery trace length after the burst (0 = none)")
	fs.StringVar(&f.tailRate, "tail-rate", "20/s", "burst: recovery trace rate")
	fs.IntVar(&f.limit, "limit", 0, "boundary: the limit L (0 = learn from headers or by probing)")
	fs.DurationVar(&f.window, "window", 0, "boundary: the window W (0 = learn from headers or by probing)")
	fs.DurationVar(&f.gap, "gap", 0, "boundary: poll interval when locating the boundary (0 = W/200)")
	fs.IntVar(&f.clients, "clients", 50, "storm/backoff: number of clients")
	fs.IntVar(&f.goal, "goal", 5, "storm/backoff: successes each client wants")
	fs.DurationVar(&f.base, "base", 100*time.Millisecond, "backoff: base delay")
	fs.DurationVar(&f.cap, "cap", 10*time.Second, "backoff: maximum delay")
	fs.BoolVar(&f.noRA, "no-retry-after", false, "backoff: ignore Retry-After")
	_ = c.RegisterFlagCompletionFunc("profile", cobra.FixedCompletions(attack.Profiles, cobra.ShellCompDirectiveNoFileComp))
}

func (f *attackFlags) buildProfile() (attack.Profile, bool, error) {
	switch f.profile {
	case "steady":
		r, err := rateFlag("rate", f.rate, true)
		if err != nil {
			return nil, false, err
		}
		if f.duration <= 0 {
			return nil, false, usageErr("--duration must be positive")
		}
		return attack.Steady{Rate: r, Duration: f.duration, Conns: f.conns}, false, nil
	case "burst":
		if f.burst < 1 {
			return nil, false, usageErr("--burst must be ≥ 1")
		}
		tr, err := rateFlag("tail-rate", f.tailRate, false)
		if err != nil {
			return nil, false, err
		}
		return attack.Burst{K: f.burst, Idle: f.idle, Tail: f.tail, TailRate: tr}, true, nil
	case "boundary":
		if f.limit < 0 || f.window < 0 {
			return nil, false, usageErr("--limit and --window must be ≥ 0")
		}
		return attack.Boundary{Limit: f.limit, Window: f.window, Gap: f.gap}, true, nil
	case "storm", "backoff":
		if f.clients < 1 || f.goal < 1 {
			return nil, false, usageErr("--clients and --goal must be ≥ 1")
		}
		return attack.Clients{N: f.clients, Goal: f.goal, Backoff: f.profile == "backoff", Base: f.base, Cap: f.cap,
			IgnoreRetryAfter: f.noRA, KeyPerClient: f.keyHeader != ""}, true, nil
	case "":
		return nil, false, usageErr("--profile is required: one of %s", strings.Join(attack.Profiles, ", "))
	}
	return nil, false, usageErr("unknown profile %q: use one of %s", f.profile, strings.Join(attack.Profiles, ", "))
}

func runAttack(c *cobra.Command, f *attackFlags, spec string) error {
	if err := f.validate(); err != nil {
		return err
	}
	prof, keep, err := f.buildProfile()
	if err != nil {
		return err
	}
	if !slices.Contains(attack.Profiles, prof.Name()) {
		return usageErr("unknown profile %q", prof.Name())
	}
	ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	tgt, err := openTarget(c, spec)
	if err != nil {
		return err
	}
	defer tgt.Close()
	req, err := f.request(tgt.URL)
	if err != nil {
		return err
	}
	path := f.outPath("attack")
	opts := map[string]string{}
	c.Flags().Visit(func(fl *pflag.Flag) { opts[fl.Name] = fl.Value.String() })
	start := time.Now() // offset 0 of the run and the header's wall clock
	stream, err := attack.CreateStream(path, attack.StreamHeader{Command: "attack", Target: spec, URL: tgt.URL, Profile: prof.Name(), Options: opts, Start: start})
	if err != nil {
		return usageErr("%v", err)
	}
	col := attack.NewCollector(keep)
	prog := report.NewProgress(c.ErrOrStderr(), progressEnabled(c.ErrOrStderr(), f.quiet), f.maxDuration)
	eng := attack.New(req, f.options(), stream.Add, col.Add, prog.Add)
	rep, notes, runErr, closeErr := runRecorded(ctx, eng, start, prof, col, stream, path)
	prog.Stop()
	if closeErr != nil {
		fmt.Fprintf(c.ErrOrStderr(), "ratecheck: writing %s: %v\n", path, closeErr)
	}
	fmt.Fprintf(c.ErrOrStderr(), "results: %s\n", path)
	if runErr != nil {
		// Partial data is kept; say what was measured before failing.
		s := col.Metrics.Summary()
		return exitWith(ExitUntested, fmt.Errorf("%s: %v (%d requests recorded in %s)", prof.Name(), runErr, s.Requests, path))
	}
	rep.Notes = notes
	if err := writeAttackOutputs(c, spec, path, rep); err != nil {
		return err
	}
	out := c.OutOrStdout()
	if f.output == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			attack.Report
			Target  string `json:"target"`
			Results string `json:"results_file"`
		}{rep, spec, path})
	}
	if err := report.Table(out, []string{prof.Name(), "value"}, rep.Rows); err != nil {
		return err
	}
	report.Verdict(out, rep.Verdict, rep.Notes)
	return nil
}

// runRecorded runs prof on eng (begun at start) and ends its results stream:
// the profile's outcome when it concluded, the engine's notes, and a note
// when ctx was interrupted. closeErr is the stream's own failure to write.
func runRecorded(ctx context.Context, eng *attack.Engine, start time.Time, prof attack.Profile, col *attack.Collector, stream *attack.Stream, path string) (rep attack.Report, notes []string, runErr, closeErr error) {
	rep, runErr = prof.Run(eng.BeginAt(ctx, start), eng, col)
	eng.Finish()
	notes = eng.Notes()
	if ctx.Err() != nil {
		notes = append(notes, "interrupted: the results so far are in "+path)
	}
	if runErr == nil {
		stream.Conclude(rep)
	}
	return rep, notes, runErr, stream.Close(notes, eng.Now())
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
