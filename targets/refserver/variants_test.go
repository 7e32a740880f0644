package refserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// variantHandler builds the handler a builtin: spec names on a virtual clock.
func variantHandler(t *testing.T, spec string, clock *time.Time) *Handler {
	t.Helper()
	opt, err := ParseBuiltin(spec)
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(opt)
	if err != nil {
		t.Fatal(err)
	}
	h.now = func() time.Time { return *clock }
	return h
}

func get(h *Handler) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	return w
}

// block=3s: Retry-After names the end of the block, when a silent client is
// admitted; a request then is admitted.
func TestBlockRetryAfterIsTheEndOfTheBlock(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := variantHandler(t, "builtin:token_bucket?rate=10/s&burst=1&block=3s", &now)
	if w := get(h); w.Code != 200 {
		t.Fatalf("first: %d", w.Code)
	}
	w := get(h)
	if w.Code != 429 || w.Header().Get("Retry-After") != "3" {
		t.Fatalf("second: %d Retry-After %q, want 429 and 3", w.Code, w.Header().Get("Retry-After"))
	}
	now = now.Add(2999 * time.Millisecond)
	if w := get(h); w.Code != 429 {
		t.Fatalf("during the block: %d", w.Code)
	}
	now = now.Add(time.Millisecond)
	if w := get(h); w.Code != 200 {
		t.Fatalf("after the block: %d", w.Code)
	}
}

// A pacer never rejects and advertises no quota; align=start picks a phase
// from the server's start, inside the window.
func TestPacerAndStartGrid(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := variantHandler(t, "builtin:leaky_shaping?rate=1000/s&burst=unbounded", &now)
	for range 5 {
		if w := get(h); w.Code != http.StatusOK || w.Header().Get("X-RateLimit-Limit") != "" || w.Header().Get("RateLimit") != "" {
			t.Fatalf("pacer: %d %v", w.Code, w.Header())
		}
	}
	s := variantHandler(t, "builtin:sliding_counter?limit=5&window=4s&align=start", &now)
	if o := s.opt.Limiter.Origin; o.IsZero() {
		t.Fatalf("no origin for a start grid")
	}
}

// refill=5s: the fill instants are anchored where the server started, and
// the headers name them — Retry-After the next fill (not the 1 s a
// continuous bucket of 1/s would say), RateLimit's t= the fill that makes
// the bucket whole.
func TestIntervalRefillHeadersNameTheFills(t *testing.T) {
	var now time.Time
	h := variantHandler(t, "builtin:token_bucket?rate=1/s&burst=10&refill=5s", &now)
	origin := h.opt.Limiter.Origin
	if origin.IsZero() {
		t.Fatalf("no origin for an interval refill")
	}
	now = origin.Add(500 * time.Millisecond)
	for i := range 10 {
		if w := get(h); w.Code != 200 {
			t.Fatalf("request %d of a full bucket: %d", i+1, w.Code)
		}
	}
	w := get(h)
	// Next fill at 5 s (4.5 s away); whole after two fills of 5, at 10 s.
	if w.Code != 429 || w.Header().Get("Retry-After") != "5" || w.Header().Get("RateLimit") != `"default";r=0;t=10` ||
		w.Header().Get("RateLimit-Policy") != `"default";q=10;w=10` {
		t.Fatalf("drained: %d Retry-After %q RateLimit %q Policy %q", w.Code, w.Header().Get("Retry-After"), w.Header().Get("RateLimit"), w.Header().Get("RateLimit-Policy"))
	}
	now = origin.Add(5*time.Second - time.Millisecond)
	if w := get(h); w.Code != 429 {
		t.Fatalf("1 ms before the fill: %d", w.Code)
	}
	now = origin.Add(5 * time.Second)
	for i := range 5 {
		if w := get(h); w.Code != 200 {
			t.Fatalf("request %d of the fill: %d", i+1, w.Code)
		}
	}
	if w := get(h); w.Code != 429 || w.Header().Get("Retry-After") != "5" {
		t.Fatalf("after the clump of 5: %d Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	if _, err := ParseBuiltin("builtin:sliding_log?limit=5&window=1s&refill=1s"); err == nil || !strings.Contains(err.Error(), "token_bucket only") {
		t.Fatalf("refill on a sliding log: %v", err)
	}
}
