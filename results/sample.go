package results

import (
	"maps"
	"math/rand/v2"
	"sort"
)

// sampler keeps an even random sample of at most MergeSample results in
// bounded memory (reservoir sampling), for the charts of a run too large
// to draw whole. Seeded: the same stream draws the same sample.
type sampler struct {
	keep  []Result
	seen  int
	rng   *rand.Rand
	drawn bool // slot is drawn for the next result
	slot  int  // where the next result goes; -1: it is not kept
}

func newSampler() *sampler { return &sampler{rng: rand.New(rand.NewPCG(1, 2))} }

// wants reports whether the next result offered will be kept, so a reader
// can skip reading what would be thrown away.
func (s *sampler) wants() bool {
	if !s.drawn {
		s.slot, s.drawn = s.seen, true
		if s.seen >= MergeSample {
			if s.slot = s.rng.IntN(s.seen + 1); s.slot >= MergeSample {
				s.slot = -1
			}
		}
	}
	return s.slot >= 0
}

// add offers r; a kept result is a copy (Headers cloned), so r may be
// reused.
func (s *sampler) add(r *Result) {
	if s.wants() {
		if s.keep == nil {
			s.keep = make([]Result, 0, MergeSample) // grown once, not copied on the way
		}
		if s.slot == len(s.keep) {
			s.keep = append(s.keep, r.Clone())
		} else {
			s.keep[s.slot] = r.Clone()
		}
	}
	s.seen++
	s.drawn = false
}

// sample is what was kept, in send order (then sequence), and whether it
// is a sample (more results were offered).
func (s *sampler) sample() ([]Result, bool) {
	sort.SliceStable(s.keep, func(i, j int) bool {
		if s.keep[i].Sent != s.keep[j].Sent {
			return s.keep[i].Sent < s.keep[j].Sent
		}
		return s.keep[i].Seq < s.keep[j].Seq
	})
	return s.keep, s.seen > len(s.keep)
}

// Clone is a copy of r that shares nothing with it that can change (its
// Headers map is copied).
func (r *Result) Clone() Result {
	c := *r
	if r.Headers != nil {
		c.Headers = maps.Clone(r.Headers)
	}
	return c
}
