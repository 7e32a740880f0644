package attack

import "github.com/ratecheck/ratecheck/results"

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

// nth is the index in the whole sequence of shard s's j-th item (from 0).
func nth(s results.Shard, j int) int {
	if s.Whole() {
		return j
	}
	return s.K - 1 + j*s.N
}

// ownedOf is how many of the first total items of a round-robin deal are
// shard s's.
func ownedOf(s results.Shard, total int) int {
	if s.Whole() {
		return total
	}
	if total <= s.K-1 {
		return 0
	}
	return (total - (s.K - 1) + s.N - 1) / s.N
}

// validShard reports whether s is the whole run or a shard within its count.
func validShard(s results.Shard) bool {
	return s.N == 0 && s.K == 0 || s.N >= 1 && s.K >= 1 && s.K <= s.N
}

// Shardable is a profile that can run one shard of itself.
type Shardable interface {
	Profile
	// Sharded is the profile with only s's part of its plan.
	Sharded(s results.Shard) Profile
}

// shardProfile gives p its shard, or says why it cannot be sharded.
func shardProfile(p Profile, s results.Shard) (Profile, error) {
	if !validShard(s) {
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

func (p Steady) Sharded(s results.Shard) Profile   { p.Shard = s; return p }
func (p Burst) Sharded(s results.Shard) Profile    { p.Shard = s; return p }
func (p Boundary) Sharded(s results.Shard) Profile { p.Shard = s; return p }
func (p Clients) Sharded(s results.Shard) Profile  { p.Shard = s; return p }

// ShardRequests is the request budget each of n shards needs for its part
// of p's plan: the largest shard's share of a paced steady plan's sends. 0
// for a plan whose count is not fixed beforehand (a closed loop at rate
// max, every other profile), which the default budget bounds.
func ShardRequests(p Profile, n int) int {
	s, ok := p.(Steady)
	if !ok || s.Rate == 0 {
		return 0
	}
	return ownedOf(results.Shard{K: 1, N: n}, s.sends())
}
