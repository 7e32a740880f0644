package results

import (
	"fmt"
	"strconv"
	"strings"
)

// A shard of a run split across processes or machines: the part a
// stream's header records (attack/shard.go plans it).

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
