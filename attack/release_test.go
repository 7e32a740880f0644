package attack

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// Ctrl-C while a burst waits for its instant: every request ends as
// canceled, none is completed at the server (the held-back bytes are never
// written), and Burst returns at once rather than after the request timeout.
func TestBurstCanceledBeforeRelease(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) }))
	defer srv.Close()
	req, err := NewRequest("GET", srv.URL, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	col := NewCollector(true)
	e := New(req, Options{Timeout: 30 * time.Second}, col.Add)
	parent, cancel := context.WithCancel(context.Background())
	ctx := e.Begin(parent)
	time.AfterFunc(200*time.Millisecond, cancel) // the user's Ctrl-C, mid-idle
	began := time.Now()
	shots := make([]Shot, 20)
	e.Burst(ctx, e.Now()+time.Minute, shots)
	e.Wait()
	e.Finish()
	if took := time.Since(began); took > 10*time.Second {
		t.Fatalf("canceled burst took %s to return", took)
	}
	rs := col.Phase("")
	if len(rs) != len(shots) {
		t.Fatalf("%d results for %d shots", len(rs), len(shots))
	}
	for _, r := range rs {
		if r.Error != "canceled" {
			t.Fatalf("result %+v, want canceled", r)
		}
	}
	if n := served.Load(); n != 0 {
		t.Fatalf("server completed %d requests of a canceled burst", n)
	}
}

// A server that hangs up on every connection: whether the prewrite or the
// release write is the one that fails, every request reports an error and
// the burst neither hangs nor panics.
func TestBurstAgainstServerThatHangsUp(t *testing.T) {
	addr := rawServer(t, func(c net.Conn) { c.Close() })
	req, err := NewRequest("GET", "http://"+addr+"/", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	col := NewCollector(true)
	e := New(req, Options{Timeout: 5 * time.Second}, col.Add)
	ctx := e.Begin(context.Background())
	e.Burst(ctx, e.Now()+20*time.Millisecond, make([]Shot, 30))
	e.Wait()
	e.Finish()
	rs := col.Phase("")
	if len(rs) != 30 {
		t.Fatalf("%d results, want 30", len(rs))
	}
	for _, r := range rs {
		if r.Error == "" || r.Status != 0 {
			t.Fatalf("result %+v: want an error and no status", r)
		}
	}
}

func TestReleasersPerCPU(t *testing.T) {
	cpus := min(runtime.GOMAXPROCS(0), runtime.NumCPU())
	for _, c := range []struct{ k, want int }{
		{1, 1},
		{8, 1},
		{9, min(2, cpus)},
		{100, min(13, cpus)},
	} {
		if got := releasers(c.k); got != c.want {
			t.Errorf("releasers(%d) = %d, want %d", c.k, got, c.want)
		}
	}
}

// BenchmarkBurstRelease100 releases bursts of 100 against a loopback
// server and reports the send spread (first to last write of the held-back
// bytes) as a custom metric; bench/run.sh measures the same at the server.
func BenchmarkBurstRelease100(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	req, _ := NewRequest("GET", srv.URL, nil, "")
	col := NewCollector(true)
	e := New(req, Options{MaxRequests: 100 * (b.N + 1)}, col.Add)
	ctx := e.Begin(context.Background())
	var total time.Duration
	for i := range b.N {
		shots := make([]Shot, 100)
		for j := range shots {
			shots[j].Phase = strconv.Itoa(i)
		}
		e.Burst(ctx, e.Now()+20*time.Millisecond, shots)
		e.Wait()
		total += results.Spread(col.Phase(strconv.Itoa(i)))
	}
	e.Finish()
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs-spread/op")
}
