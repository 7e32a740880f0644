package refserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// fakeClockHandler builds a handler whose clock the test moves.
func fakeClockHandler(t *testing.T, spec string) (*Handler, *time.Time) {
	t.Helper()
	opt, err := ParseBuiltin(spec)
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(opt)
	if err != nil {
		t.Fatal(err)
	}
	now := t0.Add(500 * time.Millisecond)
	h.now = func() time.Time { return now }
	return h, &now
}

func do(h http.Handler) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	return rec
}

func TestFixedWindowContract(t *testing.T) {
	h, _ := fakeClockHandler(t, "builtin:fixed_window?limit=5&window=2s&headers=both")
	for i := 1; i <= 5; i++ {
		rec := do(h)
		if rec.Code != 200 {
			t.Fatalf("request %d: status %d", i, rec.Code)
		}
		hd := rec.Header()
		if hd.Get("X-RateLimit-Limit") != "5" || hd.Get("X-RateLimit-Remaining") != strconv.Itoa(5-i) {
			t.Fatalf("request %d headers: %v", i, hd)
		}
		// the window closes at t0+2s: epoch seconds of that instant
		if got, want := hd.Get("X-RateLimit-Reset"), strconv.FormatInt(t0.Add(2*time.Second).Unix(), 10); got != want {
			t.Fatalf("X-RateLimit-Reset %s, want %s", got, want)
		}
		if got := hd.Get("RateLimit-Policy"); got != `"default";q=5;w=2` {
			t.Fatalf("RateLimit-Policy %q", got)
		}
		if got, want := hd.Get("RateLimit"), `"default";r=`+strconv.Itoa(5-i)+`;t=2`; got != want {
			t.Fatalf("RateLimit %q, want %q", got, want)
		}
	}
	rec := do(h)
	if rec.Code != 429 {
		t.Fatalf("6th: status %d, want 429", rec.Code)
	}
	if ra := rec.Header().Get("Retry-After"); ra != "2" { // 1.5 s rounded up
		t.Fatalf("Retry-After %q, want 2", ra)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q", ct)
	}
	var p problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Status != 429 || !strings.Contains(p.Type, "quota-exceeded") {
		t.Fatalf("problem body %q: %v", rec.Body.String(), err)
	}
}

func TestHeaderModesStatusAndRetryAfter(t *testing.T) {
	h, _ := fakeClockHandler(t, "builtin:token_bucket?rate=1/s&burst=1&headers=none&status=503&retry-after=off")
	if rec := do(h); rec.Code != 200 || rec.Header().Get("X-RateLimit-Limit") != "" || rec.Header().Get("RateLimit") != "" {
		t.Fatalf("first: %d %v", rec.Code, rec.Header())
	}
	rec := do(h)
	if rec.Code != 503 || rec.Header().Get("Retry-After") != "" {
		t.Fatalf("second: %d %v", rec.Code, rec.Header())
	}
	h, _ = fakeClockHandler(t, "builtin:token_bucket?rate=1/s&burst=1&headers=ietf")
	rec = do(h)
	if rec.Header().Get("X-RateLimit-Limit") != "" || rec.Header().Get("RateLimit-Policy") != `"default";q=1;w=1` {
		t.Fatalf("ietf only: %v", rec.Header())
	}
	h, _ = fakeClockHandler(t, "builtin:token_bucket?rate=1/s&burst=1&headers=x-ratelimit")
	rec = do(h)
	if rec.Header().Get("X-RateLimit-Limit") != "1" || rec.Header().Get("RateLimit") != "" {
		t.Fatalf("x-ratelimit only: %v", rec.Header())
	}
}

func TestScopeHeader(t *testing.T) {
	h, _ := fakeClockHandler(t, "builtin:fixed_window?limit=1&window=1m&scope=header:X-Key")
	req := func(k string) int {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("X-Key", k)
		h.ServeHTTP(rec, r)
		return rec.Code
	}
	if req("a") != 200 || req("a") != 429 || req("b") != 200 {
		t.Fatal("per-header scope does not keep keys apart")
	}
}

func TestParseBuiltinErrors(t *testing.T) {
	for spec, msg := range map[string]string{
		"builtin:":                                "names no algorithm",
		"builtin:magic":                           "unknown algorithm",
		"builtin:token_bucket?rate=ten":           "COUNT/UNIT",
		"builtin:token_bucket?burst=-1":           "burst must be ≥ 0",
		"builtin:token_bucket?status=200":         "use 429 or 503",
		"builtin:token_bucket?headers=all":        "headers",
		"builtin:fixed_window?window":             "has no value",
		"builtin:token_bucket?scope=header:":      "scope",
		"builtin:token_bucket?rate=10/s&rate=1/s": `key "rate" is given twice (rate=10/s and rate=1/s)`,
		"builtin:token_bucket?algo=fixed_window":  "the algorithm is the word after builtin:",
		"builtin:token_bucket?colour=red":         `unknown key "colour": use one of rate, burst,`,
	} {
		if _, err := ParseBuiltin(spec); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseBuiltin(%q) = %v, want error containing %q", spec, err, msg)
		}
	}
}

// End to end on a real loopback socket: five 200s, then a 429 carrying
// Retry-After and a problem+json body. align=first so the 2 s window cannot
// roll over between the requests, whatever the wall clock says.
func TestServerEndToEnd(t *testing.T) {
	s, err := StartBuiltin("builtin:fixed_window?limit=5&window=2s&align=first")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Fatalf("URL %q not on loopback", s.URL)
	}
	var codes []int
	var last *http.Response
	for range 6 {
		resp, err := http.Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
		last = resp
		if resp.StatusCode == 429 && !strings.Contains(string(body), `"status":429`) {
			t.Fatalf("429 body %q", body)
		}
	}
	if codes[4] != 200 || codes[5] != 429 {
		t.Fatalf("codes %v, want five 200 then 429", codes)
	}
	if ra, _ := strconv.Atoi(last.Header.Get("Retry-After")); ra < 1 || ra > 2 {
		t.Fatalf("Retry-After %q", last.Header.Get("Retry-After"))
	}
}

// Concurrency cap: a slow request holds its slot until it finishes.
func TestConcurrencyHoldsSlotWhileServing(t *testing.T) {
	h, _ := fakeClockHandler(t, "builtin:concurrency?max-inflight=1&latency=200ms")
	h.now = time.Now
	srv := httptest.NewServer(h)
	defer srv.Close()
	started := make(chan struct{})
	done := make(chan int)
	go func() {
		close(started)
		resp, err := http.Get(srv.URL)
		if err != nil {
			done <- -1
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	<-started
	// Poll until the slow request holds the slot (bounded), then a second
	// request must be rejected.
	deadline := time.Now().Add(2 * time.Second)
	rejected := false
	for time.Now().Before(deadline) && !rejected {
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		rejected = resp.StatusCode == 429
		if resp.StatusCode == 200 {
			break // we got the slot first: the slow one is the one to be rejected
		}
	}
	first := <-done
	if !rejected && first != 429 {
		t.Fatalf("no request was rejected while one held the only slot (first=%d)", first)
	}
}

// Closing a server twice (a deferred Close after an explicit one) returns
// at once instead of waiting forever for a serve loop that already ended.
func TestCloseTwiceReturns(t *testing.T) {
	srv, err := StartBuiltin("builtin:none")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("second Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("second Close blocked")
	}
}
