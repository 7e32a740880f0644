package refserver

import (
	"strconv"
	"testing"
	"time"
)

// A served composition (the bucket pool example: 4 per second or 8 per
// 10 s): the quota headers advertise the whole composition, and
// Retry-After is the primary tier's refill, after which a request passes;
// with every tier spent on an all-must-admit pair, Retry-After is the later
// tier's return, not the bucket's.
func TestServedTiersTellTheTruth(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := variantHandler(t, "builtin:tiers?mode=either&t1=token_bucket:rate=4/s,burst=4&t2=fixed_window:limit=8,window=10s", &now)
	for i := range 12 {
		w := get(h)
		if w.Code != 200 || w.Header().Get("X-RateLimit-Limit") != "12" || w.Header().Get("X-RateLimit-Remaining") != itoa(11-i) {
			t.Fatalf("request %d: %d, limit %q remaining %q", i+1, w.Code, w.Header().Get("X-RateLimit-Limit"), w.Header().Get("X-RateLimit-Remaining"))
		}
	}
	if w := get(h); w.Code != 429 || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("13th: %d Retry-After %q, want 429 and 1 (250 ms rounded up)", w.Code, w.Header().Get("Retry-After"))
	}
	now = now.Add(250 * time.Millisecond)
	if w := get(h); w.Code != 200 {
		t.Fatalf("after the primary's refill: %d", w.Code)
	}

	now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h = variantHandler(t, "builtin:tiers?mode=all&t1=token_bucket:rate=10/s,burst=5&t2=fixed_window:limit=6,window=10s", &now)
	for range 5 {
		get(h)
	}
	now = now.Add(time.Second) // the bucket is full again, the window has 1 left
	get(h)
	w := get(h)
	if w.Code != 429 || w.Header().Get("Retry-After") != "9" || w.Header().Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("window spent: %d Retry-After %q remaining %q, want 429, 9 s (the window's turn), 0", w.Code, w.Header().Get("Retry-After"), w.Header().Get("X-RateLimit-Remaining"))
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
