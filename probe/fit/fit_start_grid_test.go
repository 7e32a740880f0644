package fit

import (
	"testing"
	"time"
)

// TestSpreadGridCoversEachSpreadOnce: windows whose spreads overlap share
// one grid, which still puts a window within a step (startSpread /
// startGridSteps of the smallest) of every window in each one's spread —
// and a lone window keeps the grid it had alone.
func TestSpreadGridCoversEachSpreadOnce(t *testing.T) {
	minute := []time.Duration{98655 * time.Millisecond, 102500 * time.Millisecond, 97975 * time.Millisecond, 98 * time.Second, 98400 * time.Millisecond}
	grid := spreadGrid(minute)
	if len(grid) > 25 {
		t.Errorf("five windows within 5%% of each other: %d windows to try, want at most 25", len(grid))
	}
	step := startSpread / startGridSteps
	for _, n := range minute {
		for w := spreadLow(n); w <= spreadHigh(n); w += time.Duration(float64(n) * step / 4) {
			nearest := time.Duration(1<<63 - 1)
			for _, g := range grid {
				nearest = min(nearest, (g - w).Abs())
			}
			if limit := time.Duration(float64(97975*time.Millisecond) * step); nearest > limit {
				t.Fatalf("%v, in the spread of %v, is %v from the grid (a step is %v)", w, n, nearest, limit)
			}
		}
	}
	lone := spreadGrid([]time.Duration{2 * time.Second})
	if len(lone) != 2*startGridSteps+1 || lone[0] != 1500*time.Millisecond || lone[len(lone)-1] != 2500*time.Millisecond {
		t.Errorf("a lone 2 s window: grid %v, want 1.5 s to 2.5 s in %d steps", lone, 2*startGridSteps)
	}
	apart := spreadGrid([]time.Duration{time.Second, 10 * time.Second})
	if len(apart) != 2*(2*startGridSteps+1) {
		t.Errorf("1 s and 10 s: %d windows, want two grids of %d", len(apart), 2*startGridSteps+1)
	}
}
