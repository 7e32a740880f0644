package attack

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
)

// What ties the shards of one run together, read from each shard's own
// command line: the common start and the run id.

// ParseStartAt reads a common start: an RFC 3339 instant, or +DURATION
// from now. "" is no common start (the zero time). An instant already past
// is refused: a shard started late would not start with the others.
func ParseStartAt(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if rel, ok := strings.CutPrefix(v, "+"); ok {
		d, err := time.ParseDuration(rel)
		if err != nil || d <= 0 {
			return time.Time{}, fmt.Errorf("%q: a relative start is +DURATION, e.g. +30s", v)
		}
		return now.Add(d).Round(0), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: not an RFC 3339 instant (e.g. 2026-12-01T10:00:00Z) nor +DURATION", v)
	}
	if !t.After(now) {
		return time.Time{}, fmt.Errorf("%s is %s in the past: give a later instant", v, now.Sub(t).Round(time.Millisecond))
	}
	return t, nil
}

// RunID is the id every shard of a run derives alike with no coordinator:
// a hash of what they all share — the settings that shape the traffic
// (each "name=value", in any order), the target and the start instant.
func RunID(settings []string, target string, startAt time.Time) string {
	parts := slices.Sorted(slices.Values(settings))
	parts = append(parts, "target="+target, "start="+startAt.UTC().Format(time.RFC3339Nano))
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:6])
}

// ShardBudget is the request budget each of n shards must be given for its
// part of p's plan (ShardRequests) when o.MaxRequests cannot hold it; 0
// when it can. A budget the user gave (given) too small is an error
// instead: the plan would be cut short.
func ShardBudget(p Profile, n int, o Options, given bool) (int, error) {
	per := ShardRequests(p, n)
	switch {
	case per == 0 || per <= o.MaxRequests:
		return 0, nil
	case given:
		return 0, fmt.Errorf("each of the %d shards plans up to %d requests, more than the attack's %s %d: raise it to %d",
			n, per, o.name("Options.MaxRequests"), o.MaxRequests, per)
	}
	return per, nil
}
