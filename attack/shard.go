package attack

import (
	"fmt"
	"strconv"
	"strings"
)

// Sharding: one plan, N processes.
//
// A run too big for one machine is split into N shards, each a process
// (a pod of a Kubernetes Indexed Job, or a process per source address on
// one host) running the same command line with its own --shard K/N. Every
// shard computes the whole plan and keeps its own part of it, so the parts
// fit together without any coordinator: steady keeps every N-th send of
// the one schedule, a burst its share of K released at the common instant,
// storm and backoff their share of the clients, boundary its share of each
// volley. What ties the shards together is the common start on the wall
// clock (RunOptions.StartAt) and the run id every shard records.

// Shard is part K of N of a run (K counts from 1). The zero value is the
// whole run.
type Shard struct {
	K int `json:"k"`
	N int `json:"n"`
}

// Whole reports whether s is the whole run (no sharding).
func (s Shard) Whole() bool { return s.N <= 1 }

func (s Shard) String() string {
	if s.Whole() {
		return "1/1"
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}

// ParseShard reads "K/N" with 1 ≤ K ≤ N.
func ParseShard(v string) (Shard, error) {
	k, n, ok := strings.Cut(strings.TrimSpace(v), "/")
	if !ok {
		return Shard{}, fmt.Errorf("%q is not K/N (e.g. 2/4: the second of four shards)", v)
	}
	ki, err1 := strconv.Atoi(k)
	ni, err2 := strconv.Atoi(n)
	switch {
	case err1 != nil || err2 != nil:
		return Shard{}, fmt.Errorf("%q is not K/N with whole numbers (e.g. 2/4)", v)
	case ni < 1:
		return Shard{}, fmt.Errorf("%q: the shard count N must be ≥ 1", v)
	case ki < 1 || ki > ni:
		return Shard{}, fmt.Errorf("%q: K counts from 1 to N=%d", v, ni)
	}
	return Shard{K: ki, N: ni}, nil
}

// valid reports whether s is the whole run or a shard within its count.
func (s Shard) valid() bool { return s.N == 0 && s.K == 0 || s.N >= 1 && s.K >= 1 && s.K <= s.N }

// Share is how many of total items are this shard's: total/N, one more for
// the first total%N shards, so the shares differ by at most one and sum to
// total.
func (s Shard) Share(total int) int {
	if s.Whole() {
		return total
	}
	n := total / s.N
	if s.K-1 < total%s.N {
		n++
	}
	return n
}

// Owns reports whether item i (counting from 0) of a sequence dealt round
// robin belongs to this shard: items K-1, K-1+N, K-1+2N, …
func (s Shard) Owns(i int) bool { return s.Whole() || i%s.N == s.K-1 }

// nth is the index in the whole sequence of this shard's j-th item (from 0).
func (s Shard) nth(j int) int {
	if s.Whole() {
		return j
	}
	return s.K - 1 + j*s.N
}

// ownedOf is how many of the first total items of a round-robin deal are
// this shard's.
func (s Shard) ownedOf(total int) int {
	if s.Whole() {
		return total
	}
	if total <= s.K-1 {
		return 0
	}
	return (total - (s.K - 1) + s.N - 1) / s.N
}

// Shardable is a profile that can run one shard of itself.
type Shardable interface {
	Profile
	// Sharded is the profile with only s's part of its plan.
	Sharded(s Shard) Profile
}

// shardProfile gives p its shard, or says why it cannot be sharded.
func shardProfile(p Profile, s Shard) (Profile, error) {
	if !s.valid() {
		return nil, configErr("RunOptions.Shard", "shard %d/%d: K counts from 1 to N", s.K, s.N)
	}
	if s.Whole() {
		return p, nil
	}
	sp, ok := p.(Shardable)
	if !ok {
		return nil, configErr("RunOptions.Shard", "the %s profile cannot be split into shards", p.Name())
	}
	return sp.Sharded(s), nil
}

func (p Steady) Sharded(s Shard) Profile   { p.Shard = s; return p }
func (p Burst) Sharded(s Shard) Profile    { p.Shard = s; return p }
func (p Boundary) Sharded(s Shard) Profile { p.Shard = s; return p }
func (p Clients) Sharded(s Shard) Profile  { p.Shard = s; return p }
