package attack

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// The shares of any total differ by at most one and add up to it; the
// round-robin deal gives each item to exactly one shard.
func TestShardSharesAndDealCoverTheWholeOnce(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 7} {
		for _, total := range []int{0, 1, 5, 100, 101, 203} {
			sum, lo, hi := 0, total, 0
			owners := make([]int, total)
			for k := 1; k <= n; k++ {
				s := results.Shard{K: k, N: n}
				sh := s.Share(total)
				sum, lo, hi = sum+sh, min(lo, sh), max(hi, sh)
				if got := ownedOf(s, total); got != sh {
					t.Errorf("%v of %d: owns %d items, share %d", s, total, got, sh)
				}
				for j := range ownedOf(s, total) {
					owners[nth(s, j)]++
					if !s.Owns(nth(s, j)) {
						t.Errorf("%v: item %d dealt but not owned", s, nth(s, j))
					}
				}
			}
			if sum != total || (total >= n && hi-lo > 1) {
				t.Errorf("N=%d total=%d: shares sum %d, spread %d..%d", n, total, sum, lo, hi)
			}
			for i, c := range owners {
				if c != 1 {
					t.Errorf("N=%d total=%d: item %d dealt %d times", n, total, i, c)
				}
			}
		}
	}
}

// Four steady shards send exactly the whole run's schedule between them:
// every planned instant once, each shard every fourth.
func TestSteadyShardsTakeEveryNthSendOfOneSchedule(t *testing.T) {
	srv := startBuiltin(t, "builtin:none")
	const rate, dur = 2000.0, 50 * time.Millisecond // 100 sends
	var all []time.Duration
	for k := 1; k <= 4; k++ {
		res, err := Run(context.Background(), Steady{Rate: rate, Duration: dur},
			RunOptions{Request: mustRequest(t, srv.URL), KeepResults: true, Shard: results.Shard{K: k, N: 4}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Results) != 25 {
			t.Fatalf("shard %d sent %d, want 25", k, len(res.Results))
		}
		// Results come in send order, which a late dispatcher may permute
		// among sends due together: compare the plans.
		var planned []time.Duration
		for _, r := range res.Results {
			planned = append(planned, r.Scheduled)
		}
		slices.Sort(planned)
		for i, at := range planned {
			if want := time.Duration(float64(k-1+4*i) / rate * float64(time.Second)); at != want {
				t.Fatalf("shard %d send %d planned at %v, want %v", k, i, at, want)
			}
		}
		all = append(all, planned...)
		if m := res.Report.Metrics.Steady; m.TargetRate != rate/4 {
			t.Errorf("shard %d target rate %g, want its part %g", k, m.TargetRate, rate/4)
		}
	}
	slices.Sort(all)
	for i, at := range all {
		if want := time.Duration(float64(i) / rate * float64(time.Second)); at != want {
			t.Fatalf("send %d of the union at %v, want %v", i, at, want)
		}
	}
}

// A burst's shards release shares that differ by at most one; storm's
// shards run disjoint clients numbered as in the whole run.
func TestBurstAndClientShares(t *testing.T) {
	srv := startBuiltin(t, "builtin:none")
	var sizes []int
	for k := 1; k <= 3; k++ {
		res, err := Run(context.Background(), Burst{K: 10}, RunOptions{Request: mustRequest(t, srv.URL), Shard: results.Shard{K: k, N: 3}})
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, res.Report.Metrics.Burst.Size)
	}
	if !slices.Equal(sizes, []int{4, 3, 3}) {
		t.Errorf("burst of 10 in 3 shards released %v, want [4 3 3]", sizes)
	}
	seen := map[int]int{}
	for k := 1; k <= 2; k++ {
		res, err := Run(context.Background(), Clients{N: 5, Goal: 1}, RunOptions{Request: mustRequest(t, srv.URL), Shard: results.Shard{K: k, N: 2}})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Results {
			seen[r.Client] = k
		}
		if got, want := res.Report.Metrics.Clients.Clients, []int{3, 2}[k-1]; got != want {
			t.Errorf("shard %d ran %d clients, want %d", k, got, want)
		}
	}
	if want := map[int]int{1: 1, 2: 2, 3: 1, 4: 2, 5: 1}; !mapsEqual(seen, want) {
		t.Errorf("clients by shard %v, want %v", seen, want)
	}
}

func mapsEqual(a, b map[int]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Shards that cannot be made are refused before sending.
func TestShardRefusals(t *testing.T) {
	req := mustRequest(t, "http://127.0.0.1:1/")
	for _, c := range []struct {
		p    Profile
		s    results.Shard
		want string
	}{
		{Boundary{}, results.Shard{K: 1, N: 2}, "needs Boundary.Limit and Boundary.Window"},
		{Boundary{Limit: 10}, results.Shard{K: 1, N: 2}, "needs Boundary.Limit and Boundary.Window"},
		{Burst{K: 3}, results.Shard{K: 1, N: 4}, "cannot be split into 4 shards"},
		{Clients{N: 1, Goal: 1}, results.Shard{K: 1, N: 2}, "cannot be split into 2 shards"},
		{Steady{Rate: 10, Duration: time.Second}, results.Shard{K: 5, N: 4}, "K counts from 1 to N"},
	} {
		_, err := Run(context.Background(), c.p, RunOptions{Request: req, Shard: c.s})
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want a ConfigError with %q", c.p.Name(), c.s, err, c.want)
		}
	}
	_, err := Run(context.Background(), Burst{K: 1}, RunOptions{Request: req, StartAt: time.Now().Add(-time.Second)})
	if err == nil || !strings.Contains(err.Error(), "passed") {
		t.Errorf("a start instant in the past: %v", err)
	}
}

// With StartAt the run waits for the instant and makes it offset 0; the
// header records the instant, the shard, and when the wait really ended.
func TestStartAtIsOffsetZeroAndRecorded(t *testing.T) {
	srv := startBuiltin(t, "builtin:none")
	at := time.Now().Add(300 * time.Millisecond).Round(time.Millisecond)
	out := filepath.Join(t.TempDir(), "s.jsonl")
	res, err := Run(context.Background(), Burst{K: 6}, RunOptions{Request: mustRequest(t, srv.URL), Out: out, StartAt: at,
		Shard: results.Shard{K: 2, N: 3}, Header: results.StreamHeader{Command: "attack", RunID: "r1", Host: "h"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Start.Equal(at) && res.Start.Sub(at).Abs() > time.Microsecond {
		t.Errorf("offset 0 at %v, want %v", res.Start, at)
	}
	rec, err := results.ReadStreamFile(out)
	if err != nil {
		t.Fatal(err)
	}
	h := rec.Header
	if !h.Start.Equal(at) || !h.StartAt.Equal(at) || h.RunID != "r1" || h.Host != "h" || h.Shard == nil || *h.Shard != (results.Shard{K: 2, N: 3}) {
		t.Fatalf("header %+v", h)
	}
	// The wait ends at the instant, late by at most the scheduler's wake-up
	// on a loaded machine, never early — beyond the few microseconds by which
	// a wall-clock reading and the monotonic wait can disagree.
	if late := h.BeganAt.Sub(at); late < -10*time.Microsecond || late > 50*time.Millisecond {
		t.Errorf("began %v after the instant", late)
	}
	for _, r := range rec.Results {
		if r.Sent < 0 {
			t.Errorf("a request sent %v before the start instant", -r.Sent)
		}
	}
	if len(rec.Results) != 2 {
		t.Errorf("shard 2/3 of a burst of 6 sent %d", len(rec.Results))
	}
}

// A shard whose burst could not be ready by the common instant says so.
func TestShardBurstLateForTheInstantSaysSo(t *testing.T) {
	srv := startBuiltin(t, "builtin:none")
	// Idle 0: the connections are opened after the instant.
	res, err := Run(context.Background(), Burst{K: 200}, RunOptions{Request: mustRequest(t, srv.URL), Shard: results.Shard{K: 1, N: 2},
		StartAt: time.Now().Add(100 * time.Millisecond), Options: Options{Names: func(f string) string { return map[string]string{"Burst.Idle": "--idle"}[f] }}})
	if err != nil {
		t.Fatal(err)
	}
	if !hasNote(res.Report.Notes, "after the common instant") || !hasNote(res.Report.Notes, "give --idle more time") {
		t.Errorf("notes %q", res.Report.Notes)
	}
	res, err = Run(context.Background(), Burst{K: 200, Idle: 500 * time.Millisecond}, RunOptions{Request: mustRequest(t, srv.URL), Shard: results.Shard{K: 1, N: 2},
		StartAt: time.Now().Add(100 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	if hasNote(res.Report.Notes, "after the common instant") {
		t.Errorf("a burst ready in time noted late: %q", res.Report.Notes)
	}
}

// Each shard of a paced steady plan needs the largest share of its sends;
// a plan with no count fixed beforehand needs nothing added.
func TestShardRequests(t *testing.T) {
	for _, c := range []struct {
		p    Profile
		n    int
		want int
	}{
		{Steady{Rate: 1000, Duration: time.Minute}, 4, 15000},
		{Steady{Rate: 1000, Duration: time.Minute}, 7, 8572},
		{Steady{Rate: 40000, Duration: time.Minute}, 8, 300000},
		{Steady{Rate: 10, Duration: time.Second}, 1, 10},
		{Steady{Duration: time.Minute, Conns: 50}, 4, 0},
		{Burst{K: 4000}, 4, 0},
	} {
		if got := ShardRequests(c.p, c.n); got != c.want {
			t.Errorf("%+v in %d shards: %d, want %d", c.p, c.n, got, c.want)
		}
	}
}
