package fit

import (
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/targets/limiter"
)

// A composition whose second tier never binds joins its first tier's
// family, ahead of that family's own fit when it explains more, beside it
// when as much; one whose tiers both bind stays a composition.
func TestUnboundTierCompetesAsItsFamily(t *testing.T) {
	log := limiter.Tier{Algo: limiter.SlidingLog, Limit: 27, Window: 102 * time.Second}
	unbound := limiter.Tier{Algo: limiter.FixedWindow, Limit: 51, Window: time.Second, Align: limiter.AlignWall}
	binding := limiter.Tier{Algo: limiter.FixedWindow, Limit: 20, Window: time.Second, Align: limiter.AlignWall}
	comp := func(second limiter.Tier, mis int) Candidate {
		return Candidate{Config: limiter.Config{Algo: limiter.Tiers, TierMode: limiter.TiersAll, Tiers: [2]limiter.Tier{log, second}}, Mismatches: mis}
	}
	ownFit := Candidate{Config: limiter.Config{Algo: limiter.SlidingLog, Limit: 28, Window: 102 * time.Second}, Mismatches: 1}
	for _, c := range []struct {
		name     string
		tiers    []Candidate
		wantLog  []int // the log fit's mismatches after
		wantComp int   // compositions left
	}{
		{"explains more", []Candidate{comp(unbound, 0)}, []int{0}, 0},
		{"explains as much", []Candidate{comp(unbound, 1)}, []int{1, 1}, 0},
		{"explains less", []Candidate{comp(unbound, 2)}, []int{1}, 0},
		{"both tiers bind", []Candidate{comp(binding, 0)}, []int{1}, 1},
	} {
		fits := []FamilyFit{
			{Family: limiter.SlidingLog, Best: []Candidate{ownFit}},
			{Family: limiter.Tiers, Best: c.tiers},
		}
		unboundTiers(fits)
		var got []int
		for _, b := range fits[0].Best {
			got = append(got, b.Mismatches)
			if b.Config.Algo != limiter.SlidingLog {
				t.Errorf("%s: the log's fit holds a %s", c.name, b.Config.Algo)
			}
		}
		if len(got) != len(c.wantLog) || got[0] != c.wantLog[0] || len(fits[1].Best) != c.wantComp {
			t.Errorf("%s: log fit %v, compositions %d; want %v, %d", c.name, got, len(fits[1].Best), c.wantLog, c.wantComp)
		}
	}
}
