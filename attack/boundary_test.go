package attack

import (
	"testing"
	"time"
)

// QuotaHints reads a RateLimit policy of any draft, with its quota and
// window in either order, and a bare limit field as the limit alone.
func TestQuotaHints(t *testing.T) {
	for _, tc := range []struct {
		h      map[string]string
		limit  int
		window time.Duration
	}{
		{map[string]string{"ratelimit-policy": `"default";q=100;w=60`}, 100, time.Minute},
		{map[string]string{"ratelimit-policy": `"default";w=10;q=20`}, 20, 10 * time.Second},
		{map[string]string{"ratelimit-policy": `5000;w=3600`}, 5000, time.Hour},
		{map[string]string{"ratelimit-limit": `10, 10;w=1`}, 10, time.Second},
		{map[string]string{"x-ratelimit-limit": "60"}, 60, 0},
		{map[string]string{"ratelimit-policy": "garbage"}, 0, 0},
		{map[string]string{}, 0, 0},
	} {
		if l, w := QuotaHints(tc.h); l != tc.limit || w != tc.window {
			t.Errorf("%v: %d per %s, want %d per %s", tc.h, l, w, tc.limit, tc.window)
		}
	}
}
