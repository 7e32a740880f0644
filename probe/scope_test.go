package probe

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/internal/testenv"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/limiter"
	"github.com/ratecheck/ratecheck/targets/refserver"

	"github.com/ratecheck/ratecheck/probe/observation"

	"github.com/ratecheck/ratecheck/probe/fit"
)

// The trials are judged exactly from the results: capacity of its own
// needs every trial request admitted between two rejections of the probe's
// own identity; an admission of its own right after means the limit
// reopened, which tells nothing.
func TestScopeFindingsFromTrials(t *testing.T) {
	own := func(ph string, admitted bool) []shot {
		return []shot{{ph, "", 0, admitted}, {ph, "", 0, admitted}, {ph, "", 0, admitted}}
	}
	seq := func(parts ...[]shot) *observation.Observation {
		var all []shot
		for _, p := range parts {
			all = append(all, p...)
		}
		for i := range all {
			all[i].sentMs = float64(100 + i)
		}
		return handmade(all...)
	}
	ref := func(admitted bool) []shot { return []shot{{observation.PhaseScopeRef, "", 0, admitted}} }
	rejected := []shot{{observation.PhaseScopeIP, "", 0, false}}
	conn := []shot{{observation.PhaseScopeConn, "", 0, false}}
	for _, c := range []struct {
		name      string
		o         *observation.Observation
		scope     string
		reason    string
		spoofable []string
	}{
		{"per ip", seq(ref(false), own(observation.PhaseScopeIP, true), ref(false), conn, ref(false)), observation.ScopePerIP, "", nil},
		{"global", seq(ref(false), rejected, ref(false), conn, ref(false)), observation.ScopeGlobal, "", nil},
		{"per connection", seq(ref(false), own(observation.PhaseScopeIP, true), ref(false), own(observation.PhaseScopeConn, true), ref(false)), observation.ScopePerConnection, "", nil},
		{"per key", seq(ref(false), own(observation.PhaseScopeOther, true), ref(false), rejected, ref(false)), observation.ScopePerKey, "", nil},
		{"reopened", seq(ref(false), own(observation.PhaseScopeIP, true), ref(true)), observation.ScopeUntested, "admitted again right after", nil},
		{"reopened then retried", seq(ref(false), own(observation.PhaseScopeIP, true), ref(true), ref(false), rejected, ref(false)), observation.ScopeGlobal, "", nil},
		{"own not limited", seq(ref(true), own(observation.PhaseScopeIP, true), ref(false)), observation.ScopeUntested, "not limited just before", nil},
		{"no address", seq(ref(false), []shot{{observation.PhaseScopeOther, "k", 0, false}}, ref(false)), observation.ScopeUntested, "--source-addrs", nil},
		{"nothing", seq(), observation.ScopeUntested, "no scope trial ran", nil},
		{"never limited", seq(ref(true), ref(true)), observation.ScopeUntested, "were not rejected", nil},
		{"spoofable", seq(ref(false), rejected, ref(false), own(observation.PhaseScopeXFF, true), ref(false), own(observation.PhaseScopeXRealIP, true), ref(false), []shot{{observation.PhaseScopeForwarded, "", 0, false}}, ref(false)),
			observation.ScopeGlobal, "", []string{"X-Forwarded-For", "X-Real-IP"}},
	} {
		f := c.o.ScopeFindings()
		if f.Scope != c.scope || !strings.Contains(f.Reason, c.reason) || !slices.Equal(f.Spoofable, c.spoofable) {
			t.Errorf("%s: scope %s (%q) spoofable %v, want %s (%q) %v; trials %+v", c.name, f.Scope, f.Reason, f.Spoofable, c.scope, c.reason, c.spoofable, f.Trials)
		}
	}
}

// The acceptance, end to end with no extra flags: a per-address
// limit is per_ip, a global one global, a limit keyed on X-Forwarded-For is
// spoofable, one counter per TCP connection is per_connection, a header key
// is per_key. What is checked is the plan's scope trials and the inference
// read from them, so it runs the real plan on the simulator, which keys
// its limiter by source address, connection or header as the reference
// server does (seeded: the same run every time). That real sockets give
// the trials what they need — a second source address, fresh connections
// the server tells apart — is TestProbeFindsTheScopeOnRealSockets.
func TestSimProbeFindsTheScope(t *testing.T) {
	for _, c := range []struct {
		spec      string
		keyHeader string
		scope     string
		spoofable bool
	}{
		{"builtin:token_bucket?rate=10/s&burst=20&scope=ip", "", observation.ScopePerIP, false},
		{"builtin:token_bucket?rate=10/s&burst=20&scope=global", "", observation.ScopeGlobal, false},
		{"builtin:token_bucket?rate=10/s&burst=20&scope=ip&key=forwarded", "", observation.ScopePerIP, true},
		// Each connection is a client of its own: the bursts' hundreds of
		// connections are all admitted, and the limiter is named from
		// what each connection saw (the results name their connection).
		{"builtin:token_bucket?rate=10/s&burst=20&scope=connection", "", observation.ScopePerConnection, false},
		{"builtin:fixed_window?limit=20&window=2s&scope=header:X-Key", "X-Key", observation.ScopePerKey, false},
	} {
		t.Run(c.scope, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), testenv.KeepName(c.spec)+".jsonl")
			testenv.KeepOnFailure(t, path)
			res := probeSim(t, c.spec, c.keyHeader, Options{MaxTime: 15e9, ScopeKey: c.keyHeader != "", ResultsFile: path})
			inf := res.Inference
			t.Logf("%s: %s (confidence %.2f)", c.spec, inf.Summary(), inf.Confidence)
			if inf.Scope != c.scope || (len(inf.Spoofable) > 0) != c.spoofable || !inf.SpoofTested {
				t.Errorf("%s: scope %s (%s) spoofable %v tested %v; trials %+v\nnotes %v", c.spec, inf.Scope, inf.ScopeReason, inf.Spoofable, inf.SpoofTested, inf.ScopeTrials, res.Notes)
			}
			// The family always; the numbers when the inference says it is
			// sure of them (confidence ≥ 0.5, what the grade holds headers
			// to).
			if c.scope == observation.ScopePerConnection && (inf.Family != "token_bucket" ||
				inf.Confidence >= 0.5 && (inf.Burst < 18 || inf.Burst > 22 || inf.RatePerS < 9 || inf.RatePerS > 11)) {
				t.Errorf("%s: inferred %s at confidence %.2f", c.spec, inf.Summary(), inf.Confidence)
			}
			// The address trial came from another address.
			for _, r := range res.Observation.Results {
				if r.Phase == observation.PhaseScopeIP && r.Source != "127.0.0.2" {
					t.Fatalf("%s: address trial from %q", c.spec, r.Source)
				}
			}
			assertStreamSaysTheScope(t, path, inf)
		})
	}
}

// assertStreamSaysTheScope reads the results file back: it must give the
// scope and the spoofable headers the run gave.
func assertStreamSaysTheScope(t *testing.T, path string, inf Inference) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := results.ReadStream(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := FromRecorded(rec).Inference; got.Scope != inf.Scope || !slices.Equal(got.Spoofable, inf.Spoofable) {
		t.Errorf("the results file says %s %v, the run %s %v", got.Scope, got.Spoofable, inf.Scope, inf.Spoofable)
	}
}

// The scope trials on real sockets, one short probe (the smallest budget,
// MinTime) per scope that depends on them: the address trial binds
// 127.0.0.2 and the reference server keys on the address it really sees,
// and a fresh TCP connection is one the server keys apart from the probe's
// own. Each is decided by the trials' own admissions and rejections, which
// a loaded machine delays but does not change; the family and its numbers,
// and the results file read back, are TestSimProbeFindsTheScope's, on the
// simulator. (Per connection nothing is rejected in the bursts, so that
// probe needs the sustained phase: 8 s.)
func TestProbeFindsTheScopeOnRealSockets(t *testing.T) {
	t.Parallel() // live probes mostly wait on their servers: side by side
	for _, c := range []struct {
		spec    string
		scope   string
		phase   string // the trial that must have been admitted
		maxTime time.Duration
	}{
		{"builtin:token_bucket?rate=10/s&burst=20&scope=ip", observation.ScopePerIP, observation.PhaseScopeIP, MinTime},
		{"builtin:token_bucket?rate=10/s&burst=20&scope=connection", observation.ScopePerConnection, observation.PhaseScopeConn, 8 * time.Second},
	} {
		t.Run(c.scope, func(t *testing.T) {
			t.Parallel() // each probe mostly waits on its own server
			srv, err := refserver.StartBuiltin(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			req, _ := attack.NewRequest("GET", srv.URL, nil, "")
			path := filepath.Join(t.TempDir(), testenv.KeepName(c.spec)+".jsonl")
			testenv.KeepOnFailure(t, path)
			res, err := Run(context.Background(), req, Options{MaxTime: c.maxTime, ResultsFile: path})
			if err != nil {
				t.Fatal(err)
			}
			inf := res.Inference
			t.Logf("%s: scope %s, %s in %.1f s", c.spec, inf.Scope, inf.Summary(), res.Elapsed.Seconds())
			if inf.Scope != c.scope {
				t.Errorf("%s: scope %s (%s); trials %+v\nnotes %v", c.spec, inf.Scope, inf.ScopeReason, inf.ScopeTrials, res.Notes)
			}
			admitted, conns := 0, map[int64]bool{}
			for _, r := range res.Observation.Results {
				if r.Phase == observation.PhaseScopeIP && r.Source != "127.0.0.2" {
					t.Fatalf("%s: address trial from %q", c.spec, r.Source)
				}
				if r.Phase == c.phase && r.Admitted() {
					admitted++
				}
				if r.Phase == observation.PhaseScopeConn {
					conns[r.Conn] = true
				}
			}
			if admitted == 0 {
				t.Errorf("%s: no %s request was admitted", c.spec, c.phase)
			}
			// Each fresh-connection request had a connection of its own.
			if n := len(res.Observation.Phase(observation.PhaseScopeConn)); n > 0 && len(conns) != n {
				t.Errorf("%s: %d fresh-connection requests on %d connections", c.spec, n, len(conns))
			}
		})
	}
}

// A recorded probe of a token bucket of 10/s burst 20 per connection, on
// a loaded machine, that was named a sliding counter (confidence 0.17):
// the trace's admissions spread over many connections put the rate
// estimates at 16-17/s, far from any one connection's refill, and a
// burst's request answered 13 ms after its send had set its connection's
// bucket phase at the send. The rate is read from the connection knocked
// past its capacity (connRate), and a burst's request is placed where the
// server answered it (answeredArrivals): the truth then explains every
// decision, and the fit finds it.
//
// In a second run (per-connection-late-answers) a connection's first
// request, in a burst, was answered 17 ms after its send and decided 9-14
// ms before its answer: placed at either end, the truth missed 34-78
// decisions, every one within that window of a refill, and an interval
// refill of 1 per 0.1 s won by its free phase. The window is the slack of
// the connection's decisions.
func TestPerConnectionRateIsOneConnectionsRefill(t *testing.T) {
	for _, name := range []string{"per-connection-sustained", "per-connection-late-answers"} {
		obs := recordedObservation(t, "testdata/"+name+".jsonl")
		if r := fit.ConnRate(obs); r < 9.8 || r > 10.2 {
			t.Errorf("%s: connRate %.3f/s, truth 10/s", name, r)
		}
		rp, err := fit.Replay(obs, limiter.Config{Algo: limiter.TokenBucket, Rate: 10, Burst: 20})
		if err != nil {
			t.Fatal(err)
		}
		if rp.Mismatches != 0 {
			t.Errorf("%s: the truth replays %d of %d decisions wrong", name, rp.Mismatches, len(rp.Requests))
		}
		inf := Infer(obs)
		if inf.Family != limiter.TokenBucket || inf.Burst != 20 || inf.RatePerS < 9.9 || inf.RatePerS > 10.1 || inf.RefillS != 0 {
			t.Errorf("%s: named %s (confidence %.2f); truth a token bucket of 10/s burst 20 per connection", name, inf.Summary(), inf.Confidence)
		}
	}
}
