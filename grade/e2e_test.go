package grade

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/internal/testenv"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/targets/fleet"
	"github.com/ratecheck/ratecheck/targets/refserver"
	"github.com/ratecheck/ratecheck/targets/sim"
)

// probed is one end-to-end probe of a builtin: target, graded.
type probed struct {
	obs    *probe.Observation
	inf    probe.Inference
	report Report
	err    error
}

var (
	probesMu sync.Mutex
	probes   = map[string]*probeOnce{}
	// probeSlots bounds the probes running at once: the machine has two
	// cores and a burst must reach the server at one instant.
	probeSlots = make(chan struct{}, 5)
)

type probeOnce struct {
	once sync.Once
	p    probed
}

// probeMaxTime bounds each probe; the plan stops earlier when it has seen
// enough. It leaves room for the silent waits (a 2 s window's Retry-After
// and Reset, each waited out once) after the trace.
const probeMaxTime = 10 * time.Second

// runProbe starts spec's reference server and probes it exactly as
// `ratecheck probe` does (attack engine, probe.Run, probe.Infer), then
// grades the observation. Results are shared between tests.
func runProbe(t *testing.T, spec string) probed {
	t.Helper()
	if simulated(spec) {
		testenv.Simulated(t)
	}
	probesMu.Lock()
	po := probes[spec]
	if po == nil {
		po = &probeOnce{}
		probes[spec] = po
	}
	probesMu.Unlock()
	po.once.Do(func() {
		probeSlots <- struct{}{}
		defer func() { <-probeSlots }()
		po.p = probeNow(spec)
	})
	if po.p.err != nil {
		t.Fatalf("%s: %v", spec, po.p.err)
	}
	return po.p
}

// simNetwork is the link a graded probe runs across on the simulator: a
// LAN's round trip with jitter and a loaded machine's stalls, on one seed.
const simNetwork = "rtt=1ms&jitter=200us&stall=15ms&seed=1"

// simulated says whether spec's grading needs no real socket: the
// response contract is the reference server's own on the simulator
// (refserver.Handler.Decide), seeded and exact. The race fault needs real
// concurrency, and a fleet real replicas (and Redis): those run live.
func simulated(spec string) bool {
	return strings.HasPrefix(spec, refserver.BuiltinPrefix) && !strings.HasPrefix(spec, "builtin:fleet") &&
		!strings.Contains(spec, refserver.FaultRace)
}

func probeNow(spec string) probed {
	url, stop := "http://127.0.0.1/", func() {}
	opt := probe.Options{MaxTime: probeMaxTime}
	if simulated(spec) {
		cfg, err := sim.ParseSpec(sim.FromBuiltin(spec, simNetwork))
		if err != nil {
			return probed{err: err}
		}
		opt.Network = sim.Func(cfg)
	} else {
		var err error
		if url, stop, err = startBuiltin(spec); err != nil {
			return probed{err: err}
		}
	}
	defer stop()
	req, err := attack.NewRequest("GET", url, nil, "")
	if err != nil {
		return probed{err: err}
	}
	if dir := testenv.KeepDir(); dir != "" {
		opt.ResultsFile = filepath.Join(dir, testenv.KeepName(spec)+".jsonl")
	}
	res, err := probe.Run(context.Background(), req, opt)
	if err != nil {
		return probed{err: err}
	}
	return probed{obs: res.Observation, inf: res.Inference, report: Grade(res.Observation, res.Inference)}
}

// startBuiltin starts spec's reference server, or its fleet of replicas.
func startBuiltin(spec string) (url string, stop func(), err error) {
	if strings.HasPrefix(spec, "builtin:fleet?") {
		f, err := fleet.Start(context.Background(), spec)
		if err != nil {
			return "", nil, err
		}
		return f.URL, func() { f.Close() }, nil
	}
	srv, err := refserver.StartBuiltin(spec)
	if err != nil {
		return "", nil, err
	}
	return srv.URL, func() { srv.Close() }, nil
}

// describe is a failure message: the grade and every check not passed.
func (p probed) describe() string {
	var b strings.Builder
	b.WriteString("grade " + p.report.Letter + " caps " + strings.Join(p.report.Caps, "; ") + "; inference " + p.inf.Summary() + fmt.Sprintf(" (confidence %.2f)", p.inf.Confidence))
	for _, c := range p.report.Checks {
		if c.Outcome != Pass {
			b.WriteString("\n  " + c.Outcome + " " + c.ID + ": " + c.Actual)
		}
	}
	return b.String()
}

const (
	honestTB = "builtin:token_bucket?rate=10/s&burst=10"
	faultTB  = honestTB + "&fault="
	// A window whose real wait after the burst (≈1.9 s) is longer than the
	// 1 s short-retry-after claims.
	honestFW = "builtin:fixed_window?limit=10&window=2s&align=first"
	// Every over-limit request restarts the window: the probe's knocking
	// keeps it closed, a client silent for Retry-After gets in.
	restartFW = "builtin:fixed_window?limit=10&window=2s&penalty=restart"
	// A bucket whose whole-second resets are as coarse as its refill.
	smallTB = "builtin:token_bucket?rate=5/s&burst=5"
)

// checkCase is one check of the rubric against a target that breaks it:
// the check passes against the honest server and has outcome against the
// faulty one; no other check may fail but those the fault drags along by
// nature (also).
type checkCase struct {
	check   string
	honest  string
	faulty  string
	outcome string   // of check against faulty
	also    []string // other checks the fault may fail
}

var checkCases = []checkCase{
	// The two slowest probes first.
	{"retry-after.accurate", honestFW, honestFW + "&fault=short-retry-after", Fail, nil},
	{"retry-after.accurate", restartFW, restartFW + "&fault=short-retry-after", Fail, nil},
	{"retry-after.accurate", honestFW, honestFW + "&fault=early-date-retry-after", Fail, []string{"retry-after.valid"}},
	{"reset.accurate", smallTB, smallTB + "&fault=frozen-reset", Fail, []string{"reset.sane"}},
	{"reset.accurate", honestTB, faultTB + "early-reset", Fail, nil},
	{"retry-after.only-on-rejections", honestTB, faultTB + "retry-after-on-success", Warn, nil},
	{"status.429", honestTB, faultTB + "status-503", Fail, nil},
	{"retry-after.present", honestTB, faultTB + "no-retry-after", Fail, nil},
	{"retry-after.valid", honestTB, faultTB + "bad-date-retry-after", Fail, nil},
	{"retry-after.valid", honestTB, faultTB + "decimal-retry-after", Fail, nil},
	{"retry-after.valid", honestTB, faultTB + "http-date-retry-after", Pass, nil}, // a valid form, not a fault
	{"retry-after.accurate", honestTB, faultTB + "long-retry-after", Fail, nil},
	{"quota.present-on-success", honestTB, faultTB + "no-quota-on-success", Fail, nil},
	{"quota.present-on-success", honestTB, honestTB + "&headers=none", Fail, nil},
	{"quota.consistent", honestTB, faultTB + "limit-lie", Fail, []string{"limit.agrees", "burst.over-admission"}},
	{"remaining.truthful", honestTB, faultTB + "lie-remaining", Fail, nil},
	{"limit.agrees", honestTB, faultTB + "limit-lie", Fail, []string{"quota.consistent", "burst.over-admission"}},
	{"reset.sane", honestTB, faultTB + "reset-past", Fail, []string{"reset.accurate"}},
	{"reset.sane", honestTB, faultTB + "reset-epoch-ms", Warn, nil},
	{"burst.over-admission", honestTB, faultTB + refserver.FaultRace, Fail, []string{"remaining.truthful", "limit.agrees", "retry-after.accurate"}},
	{"problem.json", honestTB, faultTB + "no-problem-json", Warn, nil},
	{"cache.429", honestTB, faultTB + "cacheable-429", Fail, nil},
}

// Each check passes against the honest server and fails (or warns, for a
// recommendation) against the fault that breaks its rule, on the
// simulator; the fault that needs real concurrency runs live
// (TestRaceFaultEndToEnd).
func TestSimChecksEndToEnd(t *testing.T) {
	t.Parallel() // the probes are CPU: the package's tests side by side
	for _, tc := range checkCases {
		if !simulated(tc.faulty) {
			continue
		}
		t.Run(tc.check+"/"+tc.faulty[strings.Index(tc.faulty, ":")+1:], func(t *testing.T) {
			t.Parallel()
			h := runProbe(t, tc.honest)
			if c, _ := h.report.Check(tc.check); c.Outcome != Pass {
				t.Errorf("honest %s: %s is %s: %s\n%s", tc.honest, tc.check, c.Outcome, c.Actual, h.describe())
			}
			assertFaultFound(t, runProbe(t, tc.faulty), tc)
		})
	}
}

// The fault that needs real concurrency — a read and a write of the count
// raced by requests in flight together — over-admits a burst on a real
// socket, and burst.over-admission fails. (Its honest twin passes in
// TestSimHonestFamiliesGradeA, on the simulator.)
func TestRaceFaultEndToEnd(t *testing.T) {
	t.Parallel() // live probes mostly wait on their servers: side by side
	for _, tc := range checkCases {
		if simulated(tc.faulty) {
			continue
		}
		t.Run(tc.check+"/"+tc.faulty[strings.Index(tc.faulty, ":")+1:], func(t *testing.T) {
			assertFaultFound(t, runProbe(t, tc.faulty), tc)
		})
	}
}

// assertFaultFound asserts tc's outcome on the probe of its faulty target,
// with the requests that show it, and no unrelated check failed.
func assertFaultFound(t *testing.T, f probed, tc checkCase) {
	t.Helper()
	c, _ := f.report.Check(tc.check)
	if c.Outcome != tc.outcome {
		t.Errorf("%s: %s is %s, want %s: %s\n%s", tc.faulty, tc.check, c.Outcome, tc.outcome, c.Actual, f.describe())
	}
	if tc.outcome == Fail && len(c.Seqs) == 0 {
		t.Errorf("%s: %s failed without naming the requests that show it", tc.faulty, tc.check)
	}
	for _, o := range f.report.Checks {
		if o.ID != tc.check && o.Outcome == Fail && !slices.Contains(tc.also, o.ID) {
			t.Errorf("%s: unrelated check %s failed: %s", tc.faulty, o.ID, o.Actual)
		}
	}
}

// The honest reference server grades A or better in every family, with no
// check failing or warning.
func TestSimHonestFamiliesGradeA(t *testing.T) {
	t.Parallel() // the probes mostly wait: every test's run side by side
	for _, spec := range []string{
		honestTB,
		"builtin:leaky_shaping?rate=10/s&burst=5",
		"builtin:fixed_window?limit=10&window=1s",
		"builtin:sliding_log?limit=10&window=1s",
		"builtin:sliding_counter?limit=10&window=1s",
		"builtin:concurrency?max-inflight=5&latency=50ms",
		restartFW, // honest headers on a limiter the probe's knocking keeps closed
		// Refilled in clumps: Retry-After and Reset name fill instants.
		"builtin:token_bucket?rate=10/s&burst=20&refill=1s",
	} {
		t.Run(spec, func(t *testing.T) {
			t.Parallel()
			p := runProbe(t, spec)
			if p.report.Letter != "A+" && p.report.Letter != "A" {
				t.Errorf("%s graded %s, want A or A+\n%s", spec, p.report.Letter, p.describe())
			}
			for _, c := range p.report.Checks {
				if c.Outcome == Fail || c.Outcome == Warn {
					t.Errorf("%s: %s %s: %s", spec, c.ID, c.Outcome, c.Actual)
				}
			}
		})
	}
}

// The acceptance bar: the default honest target grades A or A+; one that
// rejects with 503 and no Retry-After grades C or worse and names both caps.
func TestSimAcceptance(t *testing.T) {
	t.Parallel() // the probes mostly wait: every test's run side by side
	t.Run("honest", func(t *testing.T) {
		t.Parallel()
		p := runProbe(t, "builtin:token_bucket?rate=10/s&burst=20&headers=both")
		if p.report.Letter != "A+" && p.report.Letter != "A" {
			t.Errorf("graded %s\n%s", p.report.Letter, p.describe())
		}
		if len(p.report.Caps) != 0 {
			t.Errorf("caps %v", p.report.Caps)
		}
	})
	t.Run("503 without Retry-After", func(t *testing.T) {
		t.Parallel()
		p := runProbe(t, "builtin:token_bucket?rate=10/s&burst=20&headers=both&status=503&retry-after=off")
		if letterIndex(p.report.Letter) < letterIndex("C") {
			t.Errorf("graded %s, want C or worse\n%s", p.report.Letter, p.describe())
		}
		caps := strings.Join(p.report.Caps, "\n")
		for _, want := range []string{"C: rejects with 503 instead of 429 (status.429)", "C: no Retry-After (retry-after.present)"} {
			if !strings.Contains(caps, want) {
				t.Errorf("caps %q lack %q", p.report.Caps, want)
			}
		}
		st, _ := p.report.Check("status.429")
		if !strings.Contains(st.Hint, "limit_req_status 429;") {
			t.Errorf("status.429 hint %q lacks the nginx directive", st.Hint)
		}
		// Checks that need a Retry-After are skipped, never passed.
		for _, id := range []string{"retry-after.valid", "retry-after.accurate"} {
			if c, _ := p.report.Check(id); c.Outcome != Skip || c.Actual == "" {
				t.Errorf("%s: %s %q, want skip with a reason", id, c.Outcome, c.Actual)
			}
		}
		b, err := json.Marshal(p.report)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		for _, k := range []string{"letter", "score", "caps", "checks", "rubric_version"} {
			if _, ok := m[k]; !ok {
				t.Errorf("JSON lacks %q: %s", k, b)
			}
		}
	})
}

// No limiter: nothing was rejected, so there is nothing to grade.
func TestSimNoLimitIsNotGraded(t *testing.T) {
	t.Parallel()
	p := runProbe(t, "builtin:none")
	if p.report.Letter != NotGraded || len(p.report.Caps) != 0 {
		t.Fatalf("graded %s caps %v, want %s", p.report.Letter, p.report.Caps, NotGraded)
	}
	for _, id := range []string{"status.429", "retry-after.present", "retry-after.accurate", "remaining.truthful", "cache.429"} {
		if c, _ := p.report.Check(id); c.Outcome != Skip {
			t.Errorf("%s: %s, want skip", id, c.Outcome)
		}
	}
}
