package probe

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/limiter"

	"github.com/ratecheck/ratecheck/probe/observation"

	"github.com/ratecheck/ratecheck/probe/fit"
)

// handmade is an observation on a virtual clock with a 1 ms round trip:
// each result is (phase, key, sent in ms, admitted).
type shot struct {
	phase    string
	key      string
	sentMs   float64
	admitted bool
}

func handmade(shots ...shot) *observation.Observation {
	o := &observation.Observation{Start: epoch, RTT: time.Millisecond}
	for i, s := range shots {
		sent := time.Duration(s.sentMs * float64(time.Millisecond))
		status := 429
		if s.admitted {
			status = 200
		}
		o.Results = append(o.Results, results.Result{Seq: i + 1, Phase: s.phase, Key: s.key, Sent: sent,
			FirstByte: sent + time.Millisecond, Done: sent + time.Millisecond, Status: status})
	}
	return o
}

// Replay answers per request, in send order: within a burst the server's
// order is unknowable, so the admitted are taken as first and the model's
// one over-admission lands on the last of them, not on the rejection sent
// among them.
func TestReplayAnswersEachRequest(t *testing.T) {
	o := handmade(
		shot{observation.PhaseBurst, "", 100, true},
		shot{observation.PhaseBurst, "", 100, true},
		shot{observation.PhaseBurst, "", 100, false},
		shot{observation.PhaseBurst, "", 100, true},
		shot{observation.PhaseBurst, "", 100, true},
		shot{observation.PhaseTrace, "", 1200, true},
	)
	r, err := fit.Replay(o, limiter.Config{Algo: limiter.FixedWindow, Limit: 3, Window: time.Second, Align: limiter.AlignFirst})
	if err != nil {
		t.Fatal(err)
	}
	type want struct{ admitted, mismatch bool }
	wants := []want{{true, false}, {true, false}, {false, false}, {true, false}, {false, true}, {true, false}}
	if len(r.Requests) != len(wants) || r.Mismatches != 1 || r.Explained() != 5 {
		t.Fatalf("replayed %+v", r)
	}
	for i, w := range wants {
		if q := r.Requests[i]; q.Index != i || q.Admitted != w.admitted || q.Mismatch != w.mismatch {
			t.Errorf("request %d: %+v, want index %d admitted %v mismatch %v", i, q, i, w.admitted, w.mismatch)
		}
	}
	if _, err := fit.Replay(o, limiter.Config{Algo: limiter.FixedWindow}); err == nil {
		t.Error("a window of limit 0 replayed without error")
	}
}

// A limit the scope experiment found global counts the request sent with
// another key against the same capacity; a per-key one gives it its own.
func TestReplayFollowsTheMeasuredScope(t *testing.T) {
	cfg := limiter.Config{Algo: limiter.FixedWindow, Limit: 3, Window: time.Minute, Align: limiter.AlignFirst}
	for _, c := range []struct {
		otherAdmitted bool
		scope         string
	}{{false, observation.ScopeGlobal}, {true, observation.ScopePerKey}} {
		// Three requests of the other key at once (scope.go), the
		// probe's own after, and an address trial as shared as the key.
		o := handmade(
			shot{observation.PhaseBurst, "", 100, true},
			shot{observation.PhaseBurst, "", 100, true},
			shot{observation.PhaseBurst, "", 100, true},
			shot{observation.PhaseScopeRef, "", 300, false},
			shot{observation.PhaseScopeOther, "other", 310, c.otherAdmitted},
			shot{observation.PhaseScopeOther, "other", 311, c.otherAdmitted},
			shot{observation.PhaseScopeOther, "other", 312, c.otherAdmitted},
			shot{observation.PhaseScopeRef, "", 313, false},
			shot{observation.PhaseScopeIP, "", 314, false},
			shot{observation.PhaseScopeRef, "", 315, false},
		)
		if !c.otherAdmitted {
			o.Results = append(o.Results[:5], o.Results[7:]...) // a shared key stops at its first rejection
		}
		if s := o.Scope(); s != c.scope {
			t.Fatalf("scope %s, want %s", s, c.scope)
		}
		r, err := fit.Replay(o, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if r.Mismatches != 0 {
			t.Errorf("%s: %d mismatches (%+v)", c.scope, r.Mismatches, r.Requests)
		}
	}
}

// The exported replay and the fit's bounded fast path are one: every best
// candidate of a family's grid replays to exactly the mismatches the fit
// scored, and the bound only ever cuts a count that already exceeds it.
func TestReplayIsWhatTheFitScores(t *testing.T) {
	for _, truth := range []limiter.Config{
		{Algo: limiter.FixedWindow, Limit: 20, Window: 2 * time.Second, Align: limiter.AlignWall},
		{Algo: limiter.SlidingCounter, Limit: 20, Window: 2 * time.Second},
		{Algo: limiter.TokenBucket, Rate: 10, Burst: 10},
	} {
		obs := simulated(t, truth, epoch, 2030*time.Millisecond, 50*time.Millisecond)
		evs, h := obs.Events(), fit.HypothesesOf(obs)
		unc := observation.DecisionUncertainty(obs.RTT)
		grids := map[string][]limiter.Config{}
		for _, l := range h.Limits {
			for _, w := range h.Windows {
				grids["windows"] = append(grids["windows"], limiter.Config{Algo: limiter.FixedWindow, Limit: l, Window: w, Align: limiter.AlignWall},
					limiter.Config{Algo: limiter.SlidingCounter, Limit: l, Window: w})
			}
			for _, r := range h.Rates {
				grids["buckets"] = append(grids["buckets"], limiter.Config{Algo: limiter.TokenBucket, Rate: r, Burst: l})
			}
		}
		for name, grid := range grids {
			best := fit.FitFamily(evs, grid, obs.RTT)
			if len(best) == 0 {
				t.Fatalf("%s: no %s fit", truth.Algo, name)
			}
			for _, c := range best {
				r, err := fit.Replay(obs, c.Config)
				if err != nil {
					t.Fatal(err)
				}
				if r.Mismatches != c.Mismatches || len(r.Requests) != c.Scored {
					t.Fatalf("%s: %+v replays to %d of %d wrong, the fit scored %d of %d", truth.Algo, c.Config, r.Mismatches, len(r.Requests), c.Mismatches, c.Scored)
				}
				full := fit.ReplayEvents(evs, c.Config, r.Offset, unc, math.MaxInt, nil)
				for _, bound := range []int{0, full - 1, full, full + 1} {
					got := fit.ReplayEvents(evs, c.Config, r.Offset, unc, bound, nil)
					if full <= bound && got != full || full > bound && got <= bound {
						t.Fatalf("%+v: bound %d gave %d, the full count is %d", c.Config, bound, got, full)
					}
				}
			}
		}
	}
}

// The model an inference names (Model) explains exactly the decisions the
// inference says it explains — also where the reported value is the middle
// of a range of tied candidates that is not itself one of them.
func TestModelExplainsWhatTheInferenceSays(t *testing.T) {
	configs := []limiter.Config{
		{Algo: limiter.TokenBucket, Rate: 10, Burst: 5},
		{Algo: limiter.TokenBucket, Rate: 2, Burst: 1},
		{Algo: limiter.SlidingLog, Limit: 10, Window: time.Second},
		{Algo: limiter.SlidingCounter, Limit: 20, Window: 2 * time.Second},
		{Algo: limiter.FixedWindow, Limit: 10, Window: 1500 * time.Millisecond, Align: limiter.AlignWall},
		{Algo: limiter.FixedWindow, Limit: 20, Window: 2 * time.Second, Align: limiter.AlignFirst},
	}
	for _, cfg := range configs {
		for _, every := range []time.Duration{30 * time.Millisecond, 100 * time.Millisecond, 230 * time.Millisecond} {
			obs := simulated(t, cfg, epoch, 650*time.Millisecond, every)
			inf := Infer(obs)
			if inf.Family == Inconclusive || inf.Family == limiter.None {
				continue
			}
			m, err := inf.Model()
			if err != nil {
				t.Fatalf("%+v: %v", cfg, err)
			}
			rp, err := fit.Replay(obs, m)
			if err != nil {
				t.Fatal(err)
			}
			if rp.Explained() != inf.Explained {
				t.Errorf("truth %+v, trace every %s: inferred %s explains %d, its model %+v %d", cfg, every, inf.Summary(), inf.Explained, m, rp.Explained())
			}
		}
	}
}

// Every model but the concurrency cap counts each key alone, so the fit may
// replay the keys one after another (keyMajor) and score exactly what the
// replay in time order scores — on random decisions of many keys, some of
// a single request, at every offset a model is tried at.
func TestKeyMajorReplayScoresAsTimeOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cfgs := []limiter.Config{
		{Algo: limiter.TokenBucket, Rate: 10, Burst: 3},
		{Algo: limiter.TokenBucket, Rate: 10, Burst: 3, RefillEvery: 300 * time.Millisecond, Origin: epoch},
		{Algo: limiter.FixedWindow, Limit: 3, Window: time.Second, Align: limiter.AlignWall},
		{Algo: limiter.FixedWindow, Limit: 3, Window: time.Second, Align: limiter.AlignFirst},
		{Algo: limiter.SlidingLog, Limit: 3, Window: time.Second, CountRejected: true},
		{Algo: limiter.SlidingCounter, Limit: 3, Window: time.Second},
		{Algo: limiter.LeakyShaping, Rate: 10, Burst: 2},
	}
	for trial := range 20 {
		var shots []shot
		for i := range 150 {
			key := fmt.Sprint("k", rng.IntN(8))
			if rng.IntN(4) == 0 {
				key = fmt.Sprint("lone", i)
			}
			shots = append(shots, shot{observation.PhaseTrace, key, float64(rng.IntN(3000)), rng.IntN(3) > 0})
		}
		slices.SortStableFunc(shots, func(a, b shot) int { return int(a.sentMs - b.sentMs) })
		o := handmade(shots...)
		evs := o.Events()
		byKey := observation.KeyMajor(evs)
		count, done := map[string]int{}, map[string]bool{}
		for _, ev := range evs {
			count[ev.Key]++
		}
		for i, ev := range byKey {
			if i > 0 && ev.Key != byKey[i-1].Key {
				if done[ev.Key] || count[ev.Key] > count[byKey[i-1].Key] {
					t.Fatalf("key-major order: %q (%d events) after %q (%d), or twice", ev.Key, count[ev.Key], byKey[i-1].Key, count[byKey[i-1].Key])
				}
				done[byKey[i-1].Key] = true
			}
		}
		unc := observation.DecisionUncertainty(o.RTT)
		for _, cfg := range cfgs {
			for _, off := range []time.Duration{-unc, 0, unc} {
				timeOrder, keyOrder := fit.ReplayEvents(evs, cfg, off, unc, math.MaxInt, nil), fit.ReplayEvents(byKey, cfg, off, unc, math.MaxInt, nil)
				if timeOrder != keyOrder {
					t.Fatalf("trial %d %+v offset %v: %d mismatches in time order, %d key by key", trial, cfg, off, timeOrder, keyOrder)
				}
			}
		}
	}
}

// A key's only request is admitted at once by every model, so the replay
// answers it without one: admitted, it is explained; rejected, it is a
// mismatch of every model alike.
func TestLoneRequestIsAdmittedByEveryModel(t *testing.T) {
	o := handmade(
		shot{observation.PhaseTrace, "a", 0, true},
		shot{observation.PhaseTrace, "a", 10, false},
		shot{observation.PhaseTrace, "b", 20, true},
		shot{observation.PhaseTrace, "c", 30, false},
	)
	evs := o.Events()
	lone := map[string]bool{}
	for _, ev := range evs {
		lone[ev.Key] = ev.Lone
	}
	if lone["a"] || !lone["b"] || !lone["c"] {
		t.Fatalf("lone %v", lone)
	}
	for _, cfg := range []limiter.Config{
		{Algo: limiter.TokenBucket, Rate: 1, Burst: 1},
		{Algo: limiter.FixedWindow, Limit: 1, Window: time.Second, Align: limiter.AlignFirst},
	} {
		r, err := fit.Replay(o, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if r.Mismatches != 1 || !r.Requests[3].Mismatch || !r.Requests[2].Admitted || r.Requests[1].Mismatch {
			t.Errorf("%s: %+v", cfg.Algo, r)
		}
	}
}

// Where the scope trials found a limit per connection, each connection is
// a key of its own: a burst over fresh connections is all first requests,
// and one connection's run of admissions is the capacity the fit starts
// from. A stream whose results do not name their connection is replayed
// as before.
func TestPerConnectionLimitIsReplayedPerConnection(t *testing.T) {
	var shots []shot
	for range 30 {
		shots = append(shots, shot{observation.PhaseBurst, "", 100, true}) // thirty connections, one request each
	}
	for i := range 12 { // then one connection: 5 admitted, then rejected
		shots = append(shots, shot{observation.PhaseTrace, "", 200 + float64(i)*10, i < 5})
	}
	shots = append(shots,
		shot{observation.PhaseScopeRef, "", 400, false},
		shot{observation.PhaseScopeConn, "", 410, true}, shot{observation.PhaseScopeConn, "", 411, true}, shot{observation.PhaseScopeConn, "", 412, true},
		shot{observation.PhaseScopeRef, "", 420, false})
	o := perConnection(t, shots)
	if c := fit.ConnCapacity(o); c != 5 {
		t.Errorf("one connection's capacity %d, want 5", c)
	}
	cfg := limiter.Config{Algo: limiter.FixedWindow, Limit: 5, Window: time.Minute, Align: limiter.AlignFirst}
	if r, _ := fit.Replay(o, cfg); r.Mismatches != 0 {
		t.Errorf("a limit of 5 per connection: %d mismatches", r.Mismatches)
	}
	for i := range o.Results {
		o.Results[i].Conn = 0
	}
	if o.PerConnection() {
		t.Error("results naming no connection replayed per connection")
	}
	if r, _ := fit.Replay(o, cfg); r.Mismatches == 0 {
		t.Error("without connections, thirty admissions at once fit a limit of 5")
	}
}

// A connection's first run before its first rejection may span seconds of
// refill: its admissions at its own closest pace are the capacity.
func TestConnDenseRunIsOneConnectionsRunAtItsPace(t *testing.T) {
	var shots []shot
	for range 30 {
		shots = append(shots, shot{observation.PhaseBurst, "", 100, true}) // thirty connections, one request each
	}
	at := 200.0
	for range 8 { // one connection, slowly: each admitted as the refill allows
		shots = append(shots, shot{observation.PhaseSustain, "", at, true})
		at += 100
	}
	for range 20 { // then at its pace: a bucket of 20 emptied
		shots = append(shots, shot{observation.PhaseSustain, "", at, true})
		at += 5
	}
	shots = append(shots, shot{observation.PhaseSustain, "", at, false},
		shot{observation.PhaseScopeRef, "", at + 100, false},
		shot{observation.PhaseScopeConn, "", at + 110, true}, shot{observation.PhaseScopeConn, "", at + 111, true}, shot{observation.PhaseScopeConn, "", at + 112, true},
		shot{observation.PhaseScopeRef, "", at + 120, false})
	o := perConnection(t, shots)
	if c := fit.ConnCapacity(o); c != 28 {
		t.Errorf("the first run before a rejection: %d, want 28", c)
	}
	if c := fit.ConnDenseRun(o); c != 20 {
		t.Errorf("the run at the connection's pace: %d, want 20", c)
	}
}

// perConnection is the run of shots whose first thirty requests (a burst)
// went over thirty connections of their own, each scope trial over a
// fresh one, and the rest over one shared connection; the scope trials
// must find the limit per connection.
func perConnection(t *testing.T, shots []shot) *observation.Observation {
	t.Helper()
	o := handmade(shots...)
	for i := range o.Results {
		switch r := &o.Results[i]; {
		case i < 30:
			r.Conn = int64(i + 1)
		case r.Phase == observation.PhaseScopeConn:
			r.Conn = int64(100 + i)
		default:
			r.Conn = 31 // the trace and the references share a connection
		}
	}
	if !o.PerConnection() {
		t.Fatalf("scope %s: not replayed per connection", o.Scope())
	}
	return o
}
