package attack

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// The spec keeps the named profile's parameters; a bad name or rate is a
// *ConfigError naming the field as Options.Names says.
func TestProfileSpec(t *testing.T) {
	names := func(f string) string {
		return map[string]string{"ProfileSpec.Name": "--profile", "Steady.Rate": "--rate", "Burst.TailRate": "--tail-rate"}[f]
	}
	o := Options{Names: names}
	s := ProfileSpec{Rate: "100/s", TailRate: "20/s", Steady: Steady{Duration: time.Second}, Burst: Burst{K: 10}, Clients: Clients{N: 3, Goal: 1}}
	for name, want := range map[string]Profile{
		"steady":   Steady{Rate: 100, Duration: time.Second},
		"burst":    Burst{K: 10, TailRate: 20},
		"boundary": Boundary{},
		"backoff":  Clients{N: 3, Goal: 1, Backoff: true},
	} {
		s.Name = name
		if p, err := s.Profile(o); err != nil || p != want {
			t.Errorf("%s: %+v, %v; want %+v", name, p, err, want)
		}
	}
	s.Name, s.Rate = "steady", "max"
	if p, err := s.Profile(o); err != nil || p.(Steady).Rate != 0 {
		t.Errorf("max: %+v, %v", p, err)
	}
	var ce *ConfigError
	for name, want := range map[string]string{"": "--profile is required: one of steady", "fast": `unknown profile "fast"`} {
		s.Name = name
		if _, err := s.Profile(o); !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v", name, err)
		}
	}
	s.Name, s.TailRate = "burst", "fast"
	if _, err := s.Profile(o); err == nil || !strings.HasPrefix(err.Error(), "--tail-rate: ") {
		t.Errorf("a bad rate: %v", err)
	}
}

// Build shards the profile and checks it against the options.
func TestProfileSpecBuild(t *testing.T) {
	s := ProfileSpec{Name: "burst", TailRate: "20/s", Burst: Burst{K: 10}}
	p, err := s.Build(Options{}, results.Shard{K: 2, N: 2})
	if err != nil || p.(Burst).Shard != (results.Shard{K: 2, N: 2}) {
		t.Errorf("%+v, %v", p, err)
	}
	if _, err := s.Build(Options{MaxConns: -1}, results.Shard{}); err == nil {
		t.Error("negative connections accepted")
	}
	s.Burst.K = ConnsCeiling + 1
	if _, err := s.Build(Options{}, results.Shard{}); err == nil {
		t.Error("a burst beyond the ceiling accepted")
	}
}

// A spec's shard budget is its steady plan's; another profile, or one not
// named, needs none of its own, and a steady rate that does not parse is
// refused.
func TestProfileSpecShardBudget(t *testing.T) {
	s := ProfileSpec{Name: "steady", Rate: "1000/s", Steady: Steady{Duration: 10 * time.Second}}
	if per, err := s.ShardBudget(Options{MaxRequests: 1000}, 2, false); err != nil || per != ShardRequests(Steady{Rate: 1000, Duration: 10 * time.Second}, 2) {
		t.Errorf("steady: %d, %v", per, err)
	}
	for _, name := range []string{"burst", ""} {
		if per, err := (ProfileSpec{Name: name}).ShardBudget(Options{MaxRequests: 1}, 2, true); err != nil || per != 0 {
			t.Errorf("%q: %d, %v", name, per, err)
		}
	}
	s.Rate = "fast"
	if _, err := s.ShardBudget(Options{MaxRequests: 1000}, 2, false); err == nil {
		t.Error("a bad rate accepted")
	}
}
