package fit

import (
	"slices"
	"testing"
	"time"
)

// A wall grid is searched at tenths of a second below longWallWindow and
// at whole seconds from it on, across the boundary without a gap.
func TestWallWindowsNearAreRoundForTheirLength(t *testing.T) {
	s := time.Second
	cases := []struct {
		lo, hi time.Duration
		want   []time.Duration
	}{
		{1450 * time.Millisecond, 1800 * time.Millisecond, []time.Duration{1500 * time.Millisecond, 1600 * time.Millisecond, 1700 * time.Millisecond, 1800 * time.Millisecond}},
		{9700 * time.Millisecond, 12500 * time.Millisecond, []time.Duration{9800 * time.Millisecond, 9900 * time.Millisecond, 10 * s, 11 * s, 12 * s}},
		{54 * s, 66 * s, []time.Duration{55 * s, 56 * s, 57 * s, 58 * s, 59 * s, 60 * s, 61 * s, 62 * s, 63 * s, 64 * s, 65 * s, 66 * s}},
		{126900 * time.Millisecond, 129 * s, []time.Duration{127 * s, 128 * s, 129 * s}},
	}
	for _, c := range cases {
		if got := wallWindowsNear(c.lo, c.hi); !slices.Equal(got, c.want) {
			t.Errorf("wallWindowsNear(%v, %v) = %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
	// Around a two-minute seed (±10 %): 24 windows, not 240 tenths.
	if n := len(wallWindowsNear(108*s, 132*s)); n != 24 {
		t.Errorf("windows from 108 s to 132 s: %d, want 24", n)
	}
}
