package attack

import (
	"strings"
	"testing"
	"time"
)

func TestParseStartAt(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Time{
		"":                     {},
		"+30s":                 now.Add(30 * time.Second),
		"2026-12-01T10:00:01Z": now.Add(time.Second),
	} {
		if got, err := ParseStartAt(v, now); err != nil || !got.Equal(want) {
			t.Errorf("%q: %v, %v; want %v", v, got, err, want)
		}
	}
	for v, want := range map[string]string{
		"+0s":                  "a relative start is +DURATION",
		"yesterday":            "not an RFC 3339 instant",
		"2026-12-01T09:59:59Z": "is 1s in the past",
	} {
		if _, err := ParseStartAt(v, now); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want %q", v, err, want)
		}
	}
}

// The run id does not depend on the order of the settings, and changes
// with any of them, the target or the instant.
func TestRunIDIsWhatTheShardsShare(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	one := RunID([]string{"profile=steady", "rate=100/s"}, "http://x/", at)
	if RunID([]string{"rate=100/s", "profile=steady"}, "http://x/", at) != one {
		t.Error("the order of the settings changes the id")
	}
	for _, other := range []string{
		RunID([]string{"profile=steady", "rate=200/s"}, "http://x/", at),
		RunID([]string{"profile=steady", "rate=100/s"}, "http://y/", at),
		RunID([]string{"profile=steady", "rate=100/s"}, "http://x/", at.Add(time.Second)),
	} {
		if other == one {
			t.Error("another run derives the same id")
		}
	}
	if len(one) != 12 {
		t.Errorf("id %q", one)
	}
}

// A steady plan larger than the budget is given its share, unless the
// user set the budget: then it is refused, naming the flag.
func TestShardBudget(t *testing.T) {
	plan := Steady{Rate: 1000, Duration: 10 * time.Second}
	names := func(f string) string { return map[string]string{"Options.MaxRequests": "--max-requests"}[f] }
	if per, err := ShardBudget(plan, 2, Options{MaxRequests: 1000}, false); err != nil || per != ShardRequests(plan, 2) || per < 5000 {
		t.Errorf("default budget: %d, %v", per, err)
	}
	if per, err := ShardBudget(plan, 2, Options{MaxRequests: 100000}, true); err != nil || per != 0 {
		t.Errorf("enough: %d, %v", per, err)
	}
	_, err := ShardBudget(plan, 2, Options{MaxRequests: 1000, Names: names}, true)
	if err == nil || !strings.Contains(err.Error(), "more than the attack's --max-requests 1000") {
		t.Errorf("too small: %v", err)
	}
	if per, err := ShardBudget(Burst{K: 100}, 2, Options{MaxRequests: 1}, true); err != nil || per != 0 {
		t.Errorf("a burst: %d, %v", per, err)
	}
}
