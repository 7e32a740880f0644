package attack

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// BenchmarkH1RoundTrip measures the lean client's cost per request on one
// keep-alive connection to a loopback server (CPU of both sides).
func BenchmarkH1RoundTrip(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	req, _ := NewRequest("GET", srv.URL, nil, "")
	e := New(req, Options{MaxRequests: b.N + 10})
	ctx := e.Begin(context.Background())
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		r, ok := e.Do(ctx, Shot{})
		if !ok || r.Status != 200 {
			b.Fatalf("%+v", r)
		}
	}
	b.StopTimer()
	e.Finish()
}

// BenchmarkMetricsAdd is the per-result aggregation cost on the hot path.
func BenchmarkMetricsAdd(b *testing.B) {
	m := results.NewMetrics()
	r := &results.Result{Status: 200, Sent: time.Millisecond, Done: 3 * time.Millisecond, Scheduled: time.Millisecond}
	b.ReportAllocs()
	for range b.N {
		m.Add(r)
	}
}

// BenchmarkWaitUntilPrecision reports how late waitUntil returns (ns/op is
// the wait; the custom metric is the mean overshoot).
func BenchmarkWaitUntilPrecision(b *testing.B) {
	ctx := context.Background()
	lockPacingThread() // the benchmark's goroutine exits locked
	var late time.Duration
	for range b.N {
		t := time.Now().Add(200 * time.Microsecond)
		waitUntil(ctx, t)
		late += time.Since(t)
	}
	b.ReportMetric(float64(late.Nanoseconds())/float64(b.N), "ns-late/op")
}
