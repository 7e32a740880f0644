package selftest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/targets/limiter"
	"github.com/ratecheck/ratecheck/targets/sim"
)

// The simulation sweep: probes of truths drawn over the whole model space
// (draw.go), each on the simulator with its own seed, scored against the
// truth, with the invariants every run must keep checked on each. A
// failing run names its seed and the one command that replays it.

// SweepOptions shape a sweep.
type SweepOptions struct {
	N       int    // probes
	Seed    uint64 // the sweep's seed: probe i's seed derives from it
	Workers int    // probes at once; 0: 2
	// Progress, when set, is called after each probe (from the workers).
	Progress func(done, n int)
}

// SweepRun is one simulated probe of the sweep.
type SweepRun struct {
	Spec        string   `json:"target"`
	Replay      string   `json:"replay"` // the command that replays it
	Interrupted bool     `json:"interrupted,omitempty"`
	Fault       string   `json:"fault,omitempty"`
	Outcome     Outcome  `json:"outcome"`
	Violations  []string `json:"violations,omitempty"`
	// took is the run's real time: the sweep's cost, not a figure of it
	// (a sweep's output is the same on any machine).
	took time.Duration
}

// judged reports whether the run's truth and answer are scored: an
// interrupted run or one whose server failed has only invariants.
func (r *SweepRun) judged() bool { return !r.Interrupted && r.Fault == "" }

// right: the family named, or reported as observationally equivalent.
func (r *SweepRun) right() bool { return r.Outcome.FamilyOK || r.Outcome.Equivalent }

// inconclusive: no family named.
func (r *SweepRun) inconclusive() bool { return r.Outcome.Inference.Family == probe.Inconclusive }

// sweepGCPercent is the garbage collector's target while a sweep runs
// (unless GOGC says otherwise): a batch of CPU-bound fits over a small
// live heap, collected four times less often than at the default 100.
// selftest --sim 60 took 40.0 s of CPU against 46.5 (-14 %; two runs each,
// alternated), its peak RSS 180-200 MB against 90-105.
const sweepGCPercent = 400

// Sweep runs opt.N simulated probes and reports them.
func Sweep(ctx context.Context, opt SweepOptions) (*SweepReport, error) {
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(sweepGCPercent))
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	runs := make([]SweepRun, opt.N)
	errs := make([]error, opt.N)
	next, done := 0, 0
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= opt.N || ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				runs[i], errs[i] = sweepOne(ctx, opt.Seed, i)
				runs[i].took = time.Since(t0)
				mu.Lock()
				done++
				if opt.Progress != nil {
					opt.Progress(done, opt.N)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	rep := summarize(runs)
	rep.Seed = opt.Seed
	return rep, nil
}

// probeSeed is probe i's seed: a pure function of the sweep's.
func probeSeed(sweep uint64, i int) uint64 {
	r := rand.New(rand.NewPCG(sweep, uint64(i)))
	return r.Uint64() >> 12 // short enough to type
}

// sweepOne draws probe i's target and runs it.
func sweepOne(ctx context.Context, sweep uint64, i int) (SweepRun, error) {
	seed := probeSeed(sweep, i)
	d := drawTarget(rand.New(rand.NewPCG(seed, 1)), seed)
	return RunSim(ctx, d)
}

// RunSim probes one simulated target with the default plan and budget,
// scores it and checks the invariants.
func RunSim(ctx context.Context, d Draw) (SweepRun, error) {
	cfg, err := sim.ParseSpec(d.Spec)
	if err != nil {
		return SweepRun{}, err
	}
	run := SweepRun{Spec: d.Spec, Replay: ReplayCommand(d), Fault: cfg.Fail, Interrupted: d.InterruptAt > 0}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if d.InterruptAt > 0 {
		cfg.Interrupt = &sim.Interrupt{At: d.InterruptAt, Cancel: cancel}
	}
	req, err := attack.NewRequest("GET", "http://127.0.0.1/", nil, "")
	if err != nil {
		return SweepRun{}, err
	}
	opt := probe.Options{Network: sim.Func(cfg), Target: d.Spec}
	res, err := probe.Run(ctx, req, opt)
	if res == nil {
		return SweepRun{}, fmt.Errorf("%s: %w", d.Spec, err)
	}
	run.Outcome = Outcome{Spec: d.Spec, Truth: cfg.Server.Limiter, TruthText: describe(cfg.Server.Limiter), Inference: res.Inference,
		Requests: len(res.Observation.Results), ElapsedS: res.Elapsed.Seconds(), Observed: res.Observation}
	run.Outcome.score()
	run.Violations = invariants(res, opt, cfg, d)
	run.Outcome.Observed = nil // the sweep keeps figures, not streams
	return run, nil
}

// ReplayCommand is the one command that replays a simulated probe.
func ReplayCommand(d Draw) string {
	if d.InterruptAt > 0 {
		return fmt.Sprintf("ratecheck probe '%s' (interrupted at %s)", d.Spec, d.InterruptAt)
	}
	return fmt.Sprintf("ratecheck probe '%s'", d.Spec)
}

// confidentBar: an answer at or above this confidence must be right.
const confidentBar = 0.8

// invariants are what every simulated run must keep, whatever the draw:
// the budgets, earned answers, failures never admitted, faults and
// interruptions never a clean pass.
func invariants(res *probe.Result, opt probe.Options, cfg sim.Config, d Draw) []string {
	var v []string
	obs, inf := res.Observation, res.Inference
	if n := len(obs.Results); n > probe.DefaultMaxRequests {
		v = append(v, fmt.Sprintf("sent %d requests, over the budget of %d", n, probe.DefaultMaxRequests))
	}
	// The time budget: the default, or what the plan grew it to (never
	// past its ceiling).
	budget := probe.DefaultMaxTime
	if g := obs.Budget.GrewTo; g > 0 {
		budget = g
	}
	if budget > probe.DefaultMaxTimeCeiling {
		v = append(v, fmt.Sprintf("grew the time budget to %s, past its ceiling of %s", budget, probe.DefaultMaxTimeCeiling))
	}
	if res.Elapsed > budget {
		v = append(v, fmt.Sprintf("ran %s, over the budget of %s", res.Elapsed, budget))
	}
	if inf.Family == probe.Inconclusive && inf.Reason == "" {
		v = append(v, "inconclusive without a reason")
	}
	for _, r := range obs.Results {
		if r.Error != "" && (r.Admitted() || r.Rejected()) {
			v = append(v, fmt.Sprintf("seq %d failed (%s) but counts as a decision", r.Seq, r.Error))
			break
		}
	}
	v = append(v, unmeasured(obs, inf)...)
	g := grade.OfProbe(res)
	if d.InterruptAt > 0 && obs.Stopped == probe.StopInterrupted && (inf.Family != probe.Inconclusive || g != nil) {
		v = append(v, fmt.Sprintf("interrupted, yet named %s (graded: %v)", inf.Family, g != nil))
	}
	if faulted(obs, cfg) && inf.Family != probe.Inconclusive {
		v = append(v, fmt.Sprintf("the server failed (%s at %s) and the run still named %s", cfg.Fail, cfg.FailInstant(), inf.Summary()))
	}
	return v
}

// faulted reports whether the server's fault hit at least lostAfter of the
// probe's own one-at-a-time requests: enough that the run is cut.
func faulted(obs *probe.Observation, cfg sim.Config) bool {
	if cfg.Fail == "" {
		return false
	}
	const hits = 10 // probe's lostAfter: the requests in a row that mean a dead target
	n := 0
	for _, r := range obs.Results {
		if r.Sent >= cfg.FailInstant()+time.Second && !strings.HasPrefix(r.Phase, "burst") && r.Phase != "silent-burst" {
			n++
		}
	}
	return n >= hits
}

// unmeasured lists what the inference states that no phase measured.
func unmeasured(obs *probe.Observation, inf probe.Inference) []string {
	var v []string
	decidedIn := func(match func(string) bool) int {
		n := 0
		for _, r := range obs.Results {
			if match(r.Phase) && r.Error == "" && (r.Admitted() || r.Rejected()) {
				n++
			}
		}
		return n
	}
	named := inf.Family != probe.Inconclusive && inf.Family != ""
	if named && decidedIn(func(p string) bool { return strings.HasPrefix(p, "burst") }) == 0 {
		v = append(v, "named "+inf.Family+" with no decided burst")
	}
	if s := inf.Scope; s != probe.ScopeUntested && s != "" && s != "global" &&
		decidedIn(func(p string) bool { return strings.HasPrefix(p, "scope-") && p != "scope-ref" }) == 0 {
		v = append(v, "scope "+s+" with no scope trial decided")
	}
	return v
}

// SweepReport is a sweep's figures: accuracy with 95 % intervals, the
// reliability of its confidence, what stayed inconclusive and why, how
// long probes took, and every run that broke an invariant or was wrong
// while confident.
type SweepReport struct {
	Seed   uint64 `json:"seed"`
	N      int    `json:"probes"`
	Judged int    `json:"judged"`           // not interrupted, no server fault
	Family Share  `json:"family_right"`     // of judged runs that named a family
	Params Share  `json:"parameters_right"` // of those with the family right
	// Confident: of answers at confidence >= 0.8, the share right.
	Confident    Share          `json:"confident_right"`
	Reliability  []Bin          `json:"reliability"`
	Inconclusive Share          `json:"inconclusive"` // of judged runs
	Reasons      map[string]int `json:"inconclusive_reasons"`
	// Durations: median probe length, and median of length over the
	// truth's window (or refill time) for window and bucket families.
	MedianS        float64                   `json:"median_duration_s"`
	MedianOverW    float64                   `json:"median_duration_over_window"`
	Confusion      map[string]map[string]int `json:"confusion"`
	WrongConfident []SweepRun                `json:"wrong_while_confident,omitempty"`
	runs           []SweepRun
	Violations     []SweepRun `json:"violations,omitempty"`
}

// Share is k of n with a Wilson 95 % interval.
type Share struct {
	K  int     `json:"k"`
	N  int     `json:"n"`
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

func share(k, n int) Share {
	s := Share{K: k, N: n}
	s.Lo, s.Hi = wilson(k, n)
	return s
}

// wilson is the Wilson score interval at 95 %.
func wilson(k, n int) (float64, float64) {
	if n == 0 {
		return 0, 1
	}
	const z = 1.96
	p, nf := float64(k)/float64(n), float64(n)
	den := 1 + z*z/nf
	mid := (p + z*z/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	return math.Max(0, mid-half), math.Min(1, mid+half)
}

func (s Share) String() string {
	if s.N == 0 {
		return "—"
	}
	return fmt.Sprintf("%d/%d = %.1f %% [%.1f, %.1f]", s.K, s.N, 100*float64(s.K)/float64(s.N), 100*s.Lo, 100*s.Hi)
}

// Bin is a confidence bin of the reliability table.
type Bin struct {
	Lo, Hi float64
	Right  Share
}

// reliabilityEdges bound the confidence bins.
var reliabilityEdges = []float64{0, 0.5, 0.8, 0.9, 1.0001}

func summarize(runs []SweepRun) *SweepReport {
	rep := &SweepReport{N: len(runs), Reasons: map[string]int{}, Confusion: map[string]map[string]int{}, runs: runs}
	var named, famRight, paramsRight, famN, confN, confRight, incon int
	bins := make([][2]int, len(reliabilityEdges)-1)
	var durations, overW []float64
	for i := range runs {
		r := &runs[i]
		if len(r.Violations) > 0 {
			rep.Violations = append(rep.Violations, *r)
		}
		if !r.judged() {
			continue
		}
		rep.Judged++
		inf := r.Outcome.Inference
		durations = append(durations, r.Outcome.ElapsedS)
		truth := observable(r.Outcome.Truth)
		if w := truthSpan(truth); w > 0 {
			overW = append(overW, r.Outcome.ElapsedS/w.Seconds())
		}
		row := rep.Confusion[truth.Algo]
		if row == nil {
			row = map[string]int{}
			rep.Confusion[truth.Algo] = row
		}
		row[inf.Family]++
		if r.inconclusive() {
			incon++
			rep.Reasons[reasonClass(inf.Reason)]++
			continue
		}
		named++
		if r.right() {
			famRight++
		}
		if r.Outcome.FamilyOK {
			famN++
			if r.Outcome.ParamsOK {
				paramsRight++
			}
		}
		for b := range bins {
			if inf.Confidence >= reliabilityEdges[b] && inf.Confidence < reliabilityEdges[b+1] {
				bins[b][1]++
				if r.right() {
					bins[b][0]++
				}
			}
		}
		if inf.Confidence >= confidentBar {
			confN++
			if r.right() {
				confRight++
			} else {
				rep.WrongConfident = append(rep.WrongConfident, *r)
			}
		}
	}
	rep.Family, rep.Params, rep.Confident = share(famRight, named), share(paramsRight, famN), share(confRight, confN)
	rep.Inconclusive = share(incon, rep.Judged)
	for b, c := range bins {
		rep.Reliability = append(rep.Reliability, Bin{Lo: reliabilityEdges[b], Hi: math.Min(1, reliabilityEdges[b+1]), Right: share(c[0], c[1])})
	}
	rep.MedianS, rep.MedianOverW = median(durations), median(overW)
	return rep
}

// truthSpan is the time a limit takes to come back whole: its window, or
// a bucket's refill from empty (0 for the others).
func truthSpan(c limiter.Config) time.Duration {
	switch c.Algo {
	case limiter.FixedWindow, limiter.SlidingLog, limiter.SlidingCounter:
		return c.Window
	case limiter.TokenBucket:
		return time.Duration(float64(c.Burst) / c.Rate * float64(time.Second))
	}
	return 0
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	return s[len(s)/2]
}

// reasonClass groups inconclusive reasons by their opening words.
func reasonClass(reason string) string {
	head, _, _ := strings.Cut(reason, ":")
	words := strings.Fields(head)
	return strings.Join(words[:min(len(words), 8)], " ")
}
