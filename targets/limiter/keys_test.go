package limiter

import (
	"math/rand/v2"
	"testing"
)

// keyed keeps one state per key, as a map would, whatever the order keys
// come in: the last key's shortcut and the map made only for a second key
// never hand one key another's state.
func TestKeyedIsAMap(t *testing.T) {
	r := rand.New(rand.NewPCG(instantSeed, 4))
	for range 200 {
		var k keyed[int]
		want := map[string]*int{}
		keys := []string{"", "a", "b", "ab"}[:1+r.IntN(4)]
		for range 50 {
			key := keys[r.IntN(len(keys))]
			if r.IntN(3) == 0 {
				if got := k.lookup(key); got != want[key] {
					t.Fatalf("lookup(%q) = %p, want %p", key, got, want[key])
				}
				continue
			}
			s := k.get(key)
			if want[key] == nil {
				if *s != 0 {
					t.Fatalf("get(%q): a new key's state is %d, want zero", key, *s)
				}
				want[key] = s
			}
			if s != want[key] {
				t.Fatalf("get(%q) = %p, want %p", key, s, want[key])
			}
			*s++
		}
	}
}
