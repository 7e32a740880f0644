package refserver

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// exhaust answers n requests and returns the last response.
func exhaust(h http.Handler, n int) *httptest.ResponseRecorder {
	var rec *httptest.ResponseRecorder
	for range n {
		rec = do(h)
	}
	return rec
}

// A token bucket 1/s of 4: four 200s, then a 429 whose honest Retry-After
// is 1 s, at a fake clock 500 ms past a whole second.
const faultBase = "builtin:token_bucket?rate=1/s&burst=4&headers=both&fault="

func TestFaultRetryAfterForms(t *testing.T) {
	for fault, want := range map[string]func(string) bool{
		"":                      func(v string) bool { return v == "1" },
		FaultShortRetryAfter:    func(v string) bool { return v == "1" },
		FaultLongRetryAfter:     func(v string) bool { return v == "3" }, // 2×1+1
		FaultNoRetryAfter:       func(v string) bool { return v == "" },
		FaultDecimalRetryAfter:  func(v string) bool { return v == "1.0" },
		FaultHTTPDateRetryAfter: func(v string) bool { return v == "Thu, 01 Jan 2026 12:00:02 GMT" }, // 12:00:00.5 + 1 s, rounded up
		FaultBadDateRetryAfter:  func(v string) bool { return v == "Thu, 01 Jan 2026 12:00:02 UTC" },
	} {
		h, _ := fakeClockHandler(t, faultBase+fault)
		rec := exhaust(h, 5)
		if rec.Code != 429 {
			t.Fatalf("%s: status %d", fault, rec.Code)
		}
		if got := rec.Header().Get("Retry-After"); !want(got) {
			t.Errorf("fault %q: Retry-After %q", fault, got)
		}
	}
}

// short-retry-after says 1 s even when the wait is longer.
func TestFaultShortRetryAfterUnderstates(t *testing.T) {
	h, _ := fakeClockHandler(t, "builtin:fixed_window?limit=2&window=10s&align=first&fault=short-retry-after")
	rec := exhaust(h, 3)
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("%d Retry-After %q, want 429 and 1 (the real wait is 10 s)", rec.Code, rec.Header().Get("Retry-After"))
	}
	if !strings.Contains(rec.Body.String(), "retry in 10 s") {
		t.Fatalf("the body should still tell the truth: %s", rec.Body.String())
	}
}

func TestFaultStatusBodyAndCache(t *testing.T) {
	h, _ := fakeClockHandler(t, faultBase+"status-503,no-problem-json,cacheable-429")
	if rec := do(h); rec.Header().Get("Cache-Control") != "" || rec.Code != 200 {
		t.Fatalf("a success must not change: %d %v", rec.Code, rec.Header())
	}
	rec := exhaust(h, 4)
	if rec.Code != 503 {
		t.Fatalf("status %d, want 503", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") || rec.Body.String() != "Service Unavailable\n" {
		t.Fatalf("body %q (%s)", rec.Body.String(), ct)
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "max-age=60" {
		t.Fatalf("Cache-Control %q", cc)
	}
	// status-503 alone keeps a consistent problem body.
	h, _ = fakeClockHandler(t, faultBase+"status-503")
	rec = exhaust(h, 5)
	if rec.Code != 503 || !strings.Contains(rec.Body.String(), `"status":503`) || rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("status-503: %d %s %v", rec.Code, rec.Body.String(), rec.Header())
	}
}

func TestFaultQuotaHeaders(t *testing.T) {
	h, now := fakeClockHandler(t, faultBase+"lie-remaining,limit-lie")
	for i := 1; i <= 4; i++ {
		rec := do(h)
		// limit 4 → advertised 2; Remaining never below ceil(4/2) = 2.
		rem := max(4-i, 2)
		if got := rec.Header().Get("X-RateLimit-Remaining"); got != strconv.Itoa(rem) {
			t.Fatalf("request %d: X-RateLimit-Remaining %s, want %d", i, got, rem)
		}
		if got := rec.Header().Get("RateLimit"); !strings.Contains(got, ";r="+strconv.Itoa(rem)+";") {
			t.Fatalf("request %d: RateLimit %q", i, got)
		}
		if rec.Header().Get("X-RateLimit-Limit") != "2" || !strings.Contains(rec.Header().Get("RateLimit-Policy"), ";q=2;") {
			t.Fatalf("request %d: limit-lie %v", i, rec.Header())
		}
	}
	if rec := do(h); rec.Code != 429 || rec.Header().Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("the rejection itself says 0: %d %v", rec.Code, rec.Header())
	}

	h, now = fakeClockHandler(t, faultBase+"reset-past")
	rec := do(h)
	if got, want := rec.Header().Get("X-RateLimit-Reset"), strconv.FormatInt(now.Add(-time.Minute).Unix(), 10); got != want {
		t.Fatalf("reset-past: %s, want %s", got, want)
	}
	h, now = fakeClockHandler(t, faultBase+"reset-epoch-ms")
	rec = do(h)
	// One token used: whole again 1 s later.
	if got, want := rec.Header().Get("X-RateLimit-Reset"), strconv.FormatInt(now.Add(time.Second).UnixMilli(), 10); got != want {
		t.Fatalf("reset-epoch-ms: %s, want %s", got, want)
	}
	h, now = fakeClockHandler(t, faultBase+"reset-past,reset-epoch-ms")
	rec = do(h)
	if got, want := rec.Header().Get("X-RateLimit-Reset"), strconv.FormatInt(now.Add(-time.Minute).Unix()*1000, 10); got != want {
		t.Fatalf("reset-past in ms: %s, want %s", got, want)
	}

	h, _ = fakeClockHandler(t, faultBase+"no-quota-on-success")
	rec = do(h)
	for _, name := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit", "RateLimit-Policy"} {
		if rec.Header().Get(name) != "" {
			t.Fatalf("no-quota-on-success: %s on a 200", name)
		}
	}
	if rec = exhaust(h, 4); rec.Code != 429 || rec.Header().Get("X-RateLimit-Remaining") != "0" || rec.Header().Get("RateLimit") == "" {
		t.Fatalf("no-quota-on-success: the 429 keeps its fields: %v", rec.Header())
	}
}

func TestParseFaults(t *testing.T) {
	opt, err := ParseBuiltin("builtin:token_bucket?fault=lie-remaining,%20short-retry-after&fault=cacheable-429&fault=lie-remaining")
	if err != nil {
		t.Fatal(err)
	}
	if got := opt.Fault.String(); got != "lie-remaining,short-retry-after,cacheable-429" {
		t.Fatalf("faults %q", got)
	}
	for spec, msg := range map[string]string{
		"builtin:token_bucket?fault=lies":                                     `fault "lies"`,
		"builtin:token_bucket?fault=short-retry-after,long-retry-after":       "cannot be combined",
		"builtin:token_bucket?fault=no-retry-after&fault=decimal-retry-after": "cannot be combined",
	} {
		if _, err := ParseBuiltin(spec); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", spec, err, msg)
		}
	}
	if names := OptionNames(); !slicesEqual(names[len(names)-1:], []string{"fault"}) {
		t.Errorf("OptionNames %v lacks fault", names)
	}
	for _, n := range FaultNames() {
		if FaultDoc(n) == "" {
			t.Errorf("fault %s has no doc", n)
		}
	}
}

func slicesEqual(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// The race fault over-admits when the checks of a burst all come before its
// acts, and never when each check follows the last act. The interleaving is
// set here, not left to the scheduler: on a loaded machine twenty real
// requests can arrive more than raceLag apart and race nothing.
func TestFaultRace(t *testing.T) {
	const spec = "builtin:fixed_window?limit=5&window=1m&align=first&fault=race"
	admitted := func(allowed []bool) (n int) {
		for _, a := range allowed {
			if a {
				n++
			}
		}
		return n
	}
	burst := func(h *Handler, key string) []bool {
		reads := make([]staleRead, 20)
		for i := range reads {
			reads[i] = h.readStale(key)
		}
		allowed := make([]bool, len(reads))
		for i, r := range reads {
			_, d := h.actOnStale(key, r)
			allowed[i] = d.Allowed
		}
		return allowed
	}
	h, _ := fakeClockHandler(t, spec)
	if n := admitted(burst(h, "a")); n != 20 {
		t.Errorf("a first burst whose checks all precede its acts: %d admitted of 20, want 20 (no read yet says room)", n)
	}
	h, _ = fakeClockHandler(t, spec)
	var seq []bool
	for range 20 {
		_, d := h.actOnStale("b", h.readStale("b"))
		seq = append(seq, d.Allowed)
	}
	if n := admitted(seq); n != 5 {
		t.Errorf("sequential check-then-act: %d admitted of 20, want the limit, 5", n)
	}
	h, _ = fakeClockHandler(t, spec)
	for range 3 {
		h.actOnStale("c", h.readStale("c"))
	}
	if n := admitted(burst(h, "c")); n != 20 {
		t.Errorf("a burst after 3 admitted, read with 2 left: %d admitted of 20, want all 20", n)
	}
}

// Over a real socket, sequential requests to the race fault, and any
// requests to a server without it, are admitted up to the limit exactly.
func TestFaultRaceLive(t *testing.T) {
	for _, tc := range []struct {
		spec       string
		concurrent bool
	}{
		{"builtin:fixed_window?limit=5&window=1m&align=first", true},
		{"builtin:fixed_window?limit=5&window=1m&align=first&fault=race", false},
	} {
		s, err := StartBuiltin(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		get := func() int {
			resp, err := http.Get(s.URL)
			if err != nil {
				t.Error(err)
				return 0
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		var mu sync.Mutex
		admitted := 0
		count := func() {
			if get() == 200 {
				mu.Lock()
				admitted++
				mu.Unlock()
			}
		}
		var wg sync.WaitGroup
		for range 20 {
			if tc.concurrent {
				wg.Go(count)
			} else {
				count()
			}
		}
		wg.Wait()
		s.Close()
		if admitted != 5 {
			t.Errorf("%s (concurrent %v): %d admitted of 20, want 5", tc.spec, tc.concurrent, admitted)
		}
	}
}

// early-date-retry-after: a UTC date always before the wait ends, however
// the instant falls on the second.
func TestFaultEarlyDateRetryAfter(t *testing.T) {
	for _, offset := range []time.Duration{0, 100 * time.Millisecond, 900 * time.Millisecond} {
		h, now := fakeClockHandler(t, "builtin:fixed_window?limit=2&window=2s&align=first&fault=early-date-retry-after")
		*now = now.Add(offset)
		exhaust(h, 2)
		*now = now.Add(300 * time.Millisecond)
		rec := do(h) // the window ends 1.7 s from now
		v := rec.Header().Get("Retry-After")
		at, err := time.Parse(time.RFC1123, v)
		if rec.Code != 429 || err != nil || !strings.HasSuffix(v, " UTC") {
			t.Fatalf("offset %s: %d Retry-After %q (%v)", offset, rec.Code, v, err)
		}
		end := now.Add(1700 * time.Millisecond)
		if early := end.Sub(at); early < 500*time.Millisecond || early > 1500*time.Millisecond {
			t.Errorf("offset %s: Retry-After %s is %s before the window ends at %s", offset, v, early, end.Format(time.StampMilli))
		}
	}
}

func TestFaultRetryAfterOnSuccess(t *testing.T) {
	h, _ := fakeClockHandler(t, faultBase+"retry-after-on-success")
	rec := do(h) // one token used of 4 at 1/s: whole again in 1 s
	if rec.Code != 200 || rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("%d Retry-After %q on a success", rec.Code, rec.Header().Get("Retry-After"))
	}
	h, _ = fakeClockHandler(t, faultBase)
	if rec := do(h); rec.Header().Get("Retry-After") != "" {
		t.Fatalf("the honest server sent Retry-After on a 200")
	}
}

// frozen-reset: the same Reset whatever the state and the time; early-reset:
// half the real time, rounded down.
func TestFaultResetValues(t *testing.T) {
	h, now := fakeClockHandler(t, faultBase+"frozen-reset")
	first := do(h).Header()
	*now = now.Add(3 * time.Second)
	rec := exhaust(h, 5)
	if rec.Code != 429 {
		t.Fatalf("status %d", rec.Code)
	}
	if a, b := first.Get("X-RateLimit-Reset"), rec.Header().Get("X-RateLimit-Reset"); a == "" || a != b {
		t.Fatalf("frozen-reset moved: %q then %q", a, b)
	}
	for _, hd := range []http.Header{first, rec.Header()} {
		if got := hd.Get("RateLimit"); !strings.HasSuffix(got, ";t=4") { // w = 4/1 s
			t.Fatalf("frozen-reset RateLimit %q, want t=4", got)
		}
	}

	h, now = fakeClockHandler(t, faultBase+"early-reset")
	rec = exhaust(h, 4) // empty: whole again in 4 s; half is 2 s
	if got, want := rec.Header().Get("X-RateLimit-Reset"), strconv.FormatInt(now.Add(2*time.Second).Unix(), 10); got != want {
		t.Fatalf("early-reset X-RateLimit-Reset %s, want %s", got, want)
	}
	if got := rec.Header().Get("RateLimit"); !strings.HasSuffix(got, ";t=2") {
		t.Fatalf("early-reset RateLimit %q, want t=2", got)
	}
	h, now = fakeClockHandler(t, faultBase+"early-reset,reset-epoch-ms")
	rec = exhaust(h, 4)
	if got, want := rec.Header().Get("X-RateLimit-Reset"), strconv.FormatInt(now.Add(2*time.Second).Unix()*1000, 10); got != want {
		t.Fatalf("early-reset in ms: %s, want %s", got, want)
	}
	if _, err := ParseBuiltin(faultBase + "frozen-reset,reset-past"); err == nil || !strings.Contains(err.Error(), "cannot be combined") {
		t.Fatalf("frozen-reset with reset-past: %v", err)
	}
}
