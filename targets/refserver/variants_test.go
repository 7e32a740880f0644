package refserver

import (
	"net/http"
	"net/http/httptest"
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
