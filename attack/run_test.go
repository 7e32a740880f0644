package attack

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/refserver"
)

func mustRequest(t *testing.T, url string) *Request {
	t.Helper()
	req, err := NewRequest("GET", url, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func startBuiltin(t *testing.T, spec string) *refserver.Server {
	t.Helper()
	srv, err := refserver.StartBuiltin(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// A steady run interrupted after about 1 s of a planned 10 s reports the
// admitted rate over the time it really ran. The truth is the bucket's:
// B + R·T admissions in T (it never idles longer than B/R = 100 ms at
// 300/s, so no token is lost), with T measured here from the run's start
// to the cancel. Within 10%: one token either way is 1%, the requests in
// flight at the cancel (abandoned) a few more, and T's error is timer
// resolution.
func TestRunInterruptedSteadyRateIsOverTimeSpent(t *testing.T) {
	const rate, burst = 100.0, 10.0
	srv := startBuiltin(t, fmt.Sprintf("builtin:token_bucket?rate=%g/s&burst=%g", rate, burst))
	ctx, cancel := context.WithCancel(context.Background())
	begun := time.Now()
	var cancelled time.Time
	stop := time.AfterFunc(time.Second, func() { cancelled = time.Now(); cancel() })
	defer stop.Stop()
	res, err := Run(ctx, Steady{Rate: 300, Duration: 10 * time.Second}, RunOptions{Request: mustRequest(t, srv.URL)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != StopInterrupted || !res.CutShort() {
		t.Fatalf("stopped %q, want interrupted", res.Stopped)
	}
	T := cancelled.Sub(begun).Seconds()
	truth := (burst + rate*T) / T
	m := res.Report.Metrics.Steady
	if got := m.AdmittedRate; got < 0.9*truth || got > 1.1*truth {
		t.Fatalf("admitted rate %.1f/s over %v, truth %.1f/s over %.3f s (admitted %d)", got, m.Span, truth, T, res.Summary.Admitted)
	}
	if !m.CutShort || !strings.Contains(res.Report.Verdict, "cut short") || !hasNote(res.Report.Notes, "interrupted after") {
		t.Fatalf("verdict %q notes %v: the cut is not said", res.Report.Verdict, res.Report.Notes)
	}
}

func hasNote(notes []string, sub string) bool {
	for _, n := range notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

// One request is no rate: a steady run the budget stops after its first
// send says its rates were not measured, rather than "sent 0.0/s" beside an
// admitted rate from one answer over one interval.
func TestSteadyOfOneRequestMeasuresNoRate(t *testing.T) {
	srv := startBuiltin(t, "builtin:none")
	res, err := Run(context.Background(), Steady{Rate: 50, Duration: 5 * time.Second},
		RunOptions{Request: mustRequest(t, srv.URL), Options: Options{MaxRequests: 1}})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Report.Metrics.Steady
	if res.Summary.Requests != 1 || m.Unmeasured == "" || m.AchievedRate != 0 || m.AdmittedRate != 0 {
		t.Fatalf("%d requests: %+v", res.Summary.Requests, m)
	}
	if !strings.Contains(res.Report.Verdict, "rates not measured") || strings.Contains(res.Report.Verdict, "/s") {
		t.Errorf("verdict %q", res.Report.Verdict)
	}
	// Two requests are a rate again: 50/s, unless a late send (the race
	// detector on a loaded machine) made the run say it was imprecise.
	res, err = Run(context.Background(), Steady{Rate: 50, Duration: 5 * time.Second},
		RunOptions{Request: mustRequest(t, srv.URL), Options: Options{MaxRequests: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Report.Metrics.Steady; m.Unmeasured != "" || m.AchievedRate <= 0 || !m.Imprecise && (m.AchievedRate < 40 || m.AchievedRate > 60) {
		t.Errorf("2 requests at 50/s: %+v", m)
	}
}

// A caller's own deadline is an interruption, not the run's time budget.
func TestRunCallerDeadlineIsNotTheTimeBudget(t *testing.T) {
	srv := startBuiltin(t, "builtin:none")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res, err := Run(ctx, Steady{Rate: 50, Duration: 5 * time.Second}, RunOptions{Request: mustRequest(t, srv.URL)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != StopInterrupted || hasNote(res.Report.Notes, "time budget") {
		t.Fatalf("stopped %q, notes %v", res.Stopped, res.Report.Notes)
	}
}

// The recovery tail's rate is over the time it ran when the request budget
// ends it: 100/s for 10 s planned, cut after 40 requests (~0.4 s).
func TestBurstTailRateOverTimeSpent(t *testing.T) {
	srv := startBuiltin(t, "builtin:none")
	res, err := Run(context.Background(), Burst{K: 5, Tail: 10 * time.Second, TailRate: 100},
		RunOptions{Request: mustRequest(t, srv.URL), Options: Options{MaxRequests: 45}})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Report.Metrics.Burst
	if res.Stopped != StopRequestBudget || !m.TailCutShort {
		t.Fatalf("stopped %q, %+v", res.Stopped, m)
	}
	// The in-flight request the budget abandons may be lost: 39 or 40
	// admitted over ~0.4 s.
	if m.TailRate < 90 || m.TailRate > 110 {
		t.Fatalf("tail rate %.1f/s over %v (%d admitted), want ≈100/s", m.TailRate, m.TailSpan, m.TailAdmitted)
	}
}

// The attempt rate's last bin is over the part of it the clients ran.
func TestBinRatesLastBinOverItsWidth(t *testing.T) {
	at := func(ms ...int) []*results.Result {
		var rs []*results.Result
		for _, v := range ms {
			rs = append(rs, &results.Result{Sent: time.Duration(v) * time.Millisecond})
		}
		return rs
	}
	got, partial := binRates(at(0, 50, 100, 120), 100*time.Millisecond, 150*time.Millisecond)
	if want := []float64{20, 40}; !reflect.DeepEqual(got, want) || !partial {
		t.Fatalf("rates %v (partial %v), want %v", got, partial, want)
	}
	if got, partial = binRates(at(0, 50, 100, 120), 100*time.Millisecond, 250*time.Millisecond); !reflect.DeepEqual(got, []float64{20, 20}) || partial {
		t.Fatalf("full last bin: rates %v (partial %v)", got, partial)
	}
}

// Nothing answered: exit-3 material with the cause, never "0 admitted, 0
// rejected" as if a limiter had been seen.
func TestRunUntestedSaysWhy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := ln.Addr().String()
	ln.Close()
	garbage := rawServer(t, func(c net.Conn) {
		_, _ = bufio.NewReader(c).ReadString('\n')
		_, _ = c.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n\r\n"))
	})
	reset := rawServer(t, func(c net.Conn) {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // RST, not FIN
		}
		c.Close()
	})
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	tls := httptest.NewUnstartedServer(http.NotFoundHandler())
	tls.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed handshakes are the point
	tls.StartTLS()
	defer tls.Close()
	for _, c := range []struct {
		url  string
		p    Profile
		want string
	}{
		{"http://" + refused + "/", Burst{K: 5}, "every request failed: connection refused to " + refused},
		{"http://" + refused + "/", Steady{Rate: 100, Duration: 50 * time.Millisecond}, "every request failed: connection refused to " + refused},
		{"http://" + garbage + "/", Burst{K: 3}, "every request failed: malformed status line"},
		{"http://" + reset + "/", Steady{Rate: 100, Duration: 30 * time.Millisecond}, "every request failed: "},
		{tls.URL, Burst{K: 2}, "every request failed: TLS certificate"},
		{notFound.URL, Burst{K: 4}, "statuses 404 (4)"},
		{"http://" + refused + "/", Boundary{}, "every request failed: connection refused to " + refused},
	} {
		res, err := Run(context.Background(), c.p, RunOptions{Request: mustRequest(t, c.url), Options: Options{Timeout: 2 * time.Second}})
		if !errors.Is(err, ErrUntested) || res == nil || !strings.Contains(res.Untested, c.want) {
			t.Errorf("%s %s: err %v, untested %q; want %q", c.p.Name(), c.url, err, resUntested(res), c.want)
			continue
		}
		if res.Concluded && (!strings.HasPrefix(res.Report.Verdict, "not tested: ") || strings.Contains(res.Report.Verdict, "0 admitted")) {
			t.Errorf("%s %s: verdict %q", c.p.Name(), c.url, res.Report.Verdict)
		}
	}
}

func resUntested(r *RunResult) string {
	if r == nil {
		return "<no result>"
	}
	return r.Untested
}

// Combinations that cannot give the experiment they name are refused
// before anything is sent, in the caller's names for the fields.
func TestRunRefusesBeforeSending(t *testing.T) {
	var conns atomic.Int64
	addr := rawServer(t, func(c net.Conn) { conns.Add(1) })
	req := mustRequest(t, "http://"+addr+"/")
	flags := map[string]string{"Burst.K": "--burst", "Options.MaxRequests": "--max-requests", "Options.MaxConns": "--max-conns"}
	for _, c := range []struct {
		p     Profile
		o     Options
		field string
		want  string
	}{
		{Burst{K: 50}, Options{MaxRequests: 10}, "Burst.K", "--burst 50 is more than the request budget --max-requests 10"},
		{Burst{K: 1500}, Options{}, "Burst.K", "--burst 1500 needs 1500 connections at once, more than --max-conns 1000 allows"},
		{Burst{K: 10_000_000}, Options{MaxConns: 10_000}, "Burst.K", "beyond the ceiling of 10000"},
		{Burst{K: 5}, Options{MaxConns: 20_000}, "Options.MaxConns", "--max-conns 20000 is beyond the ceiling"},
		{Burst{K: 0}, Options{}, "Burst.K", "--burst must be ≥ 1"},
		{Boundary{Limit: 600}, Options{}, "Boundary.Limit", "holds 1200 requests in flight at once"},
		{Clients{N: 2000, Goal: 1}, Options{}, "Clients.N", "needs 2000 connections"},
		{Steady{Rate: 10}, Options{}, "Steady.Duration", "Steady.Duration must be positive"},
	} {
		c.o.Names = func(f string) string { return flags[f] }
		began := time.Now()
		res, err := Run(context.Background(), c.p, RunOptions{Request: req, Options: c.o})
		var ce *ConfigError
		if res != nil || !errors.As(err, &ce) || ce.Field != c.field || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: result %v, error %v; want a ConfigError on %s saying %q", c.p, res != nil, err, c.field, c.want)
		}
		if took := time.Since(began); took > time.Second {
			t.Errorf("%+v: refusing took %v", c.p, took)
		}
	}
	if n := conns.Load(); n != 0 {
		t.Fatalf("%d connections were opened by runs that should have been refused", n)
	}
	// Without Names, messages use the Go names, never a CLI flag.
	err := Burst{K: 50}.Validate(Options{MaxRequests: 10})
	if err == nil || strings.Contains(err.Error(), "--") || !strings.Contains(err.Error(), "Burst.K 50") {
		t.Fatalf("library message %v", err)
	}
}

// The engine's request budget may run out before Begin (a Do outside a
// run): no panic, and the run that begins is already over.
func TestEngineBudgetBeforeBegin(t *testing.T) {
	srv := startBuiltin(t, "builtin:none")
	e := New(mustRequest(t, srv.URL), Options{MaxRequests: 1})
	ctx := context.Background()
	if _, ok := e.Do(ctx, Shot{}); !ok {
		t.Fatal("first Do refused")
	}
	if _, ok := e.Do(ctx, Shot{}); ok {
		t.Fatal("second Do passed the budget of 1")
	}
	run := e.Begin(ctx)
	if run.Err() == nil || e.Stopped() != StopRequestBudget {
		t.Fatalf("run context %v, stopped %q", run.Err(), e.Stopped())
	}
	e.Finish()
}

// After Finish the engine keeps nothing registered with its parent
// context, which may live on for the whole program (a library caller's).
func TestEngineLeavesParentContextAlone(t *testing.T) {
	srv := startBuiltin(t, "builtin:none")
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	collected := make(chan struct{})
	func() {
		e := New(mustRequest(t, srv.URL), Options{})
		runtime.AddCleanup(e, func(ch chan struct{}) { close(ch) }, collected)
		ctx := e.Begin(parent)
		e.Do(ctx, Shot{})
		e.Finish()
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		select {
		case <-collected:
			return
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the finished engine is still reachable from its parent context")
		}
	}
}

// A result that arrives after Close is dropped, not a panic; a second
// Close returns the first one's error.
func TestStreamAddAfterClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	st, err := results.CreateStream(path, results.StreamHeader{Profile: "steady"})
	if err != nil {
		t.Fatal(err)
	}
	st.Add(&results.Result{Seq: 1, Status: 200})
	if err := st.Close(nil, time.Second); err != nil {
		t.Fatal(err)
	}
	st.Add(&results.Result{Seq: 2, Status: 200})
	if err := st.Close(nil, time.Second); err != nil || st.Dropped() != 1 {
		t.Fatalf("second close %v, dropped %d", err, st.Dropped())
	}
	f, _ := os.Open(path)
	defer f.Close()
	rec, err := results.ReadStream(f)
	if err != nil || len(rec.Results) != 1 || rec.End == nil || rec.End.Requests != 1 {
		t.Fatalf("%+v %v", rec, err)
	}
}

// A report read back — from -o json or from a results stream — has the
// same typed metrics as the live run.
func TestMetricsReadBackTyped(t *testing.T) {
	srv := startBuiltin(t, "builtin:token_bucket?rate=1/s&burst=3")
	path := filepath.Join(t.TempDir(), "r.jsonl")
	res, err := Run(context.Background(), Burst{K: 5}, RunOptions{Request: mustRequest(t, srv.URL), Out: path})
	if err != nil {
		t.Fatal(err)
	}
	live := res.Report.Metrics
	b, err := json.Marshal(res.Report)
	if err != nil {
		t.Fatal(err)
	}
	var back results.Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Metrics.Burst == nil || !reflect.DeepEqual(*back.Metrics.Burst, *live.Burst) {
		t.Fatalf("-o json read back: %+v, live %+v", back.Metrics.Burst, live.Burst)
	}
	f, _ := os.Open(path)
	defer f.Close()
	rec, err := results.ReadStream(f)
	if err != nil || rec.End == nil || rec.End.Outcome == nil {
		t.Fatalf("%+v %v", rec, err)
	}
	got := rec.End.Outcome.Report()
	if got.Metrics.Burst == nil || !reflect.DeepEqual(*got.Metrics.Burst, *live.Burst) || got.Verdict != res.Report.Verdict {
		t.Fatalf("stream read back: %+v, live %+v", got.Metrics.Burst, live.Burst)
	}
	// An end record written before the outcome named its profile decodes
	// by the header's.
	old := `{"type":"header","schema":1,"profile":"burst"}
{"type":"end","requests":0,"outcome":{"verdict":"v","metrics":{"size":7,"admitted":2}}}`
	rec, err = results.ReadStream(strings.NewReader(old))
	if err != nil || rec.End.Outcome.Metrics.Burst == nil || rec.End.Outcome.Metrics.Burst.Size != 7 {
		t.Fatalf("old end record: %+v %v", rec.End, err)
	}
}

// Every status the burst saw is in its table: a 404 is never hidden behind
// "admitted" and "rejected".
func TestBurstTableShowsEveryStatus(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n.Add(1) % 3 {
		case 0:
			w.WriteHeader(404)
		case 1:
			w.WriteHeader(429)
		}
	}))
	defer srv.Close()
	res, err := Run(context.Background(), Burst{K: 9}, RunOptions{Request: mustRequest(t, srv.URL)})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Report.Metrics.Burst
	if m.Other != 3 || m.Statuses[404] != 3 || m.Statuses[200] != 3 || m.Statuses[429] != 3 {
		t.Fatalf("%+v", m)
	}
	var statuses string
	for _, r := range res.Report.Rows {
		if r[0] == "statuses" {
			statuses = r[1]
		}
	}
	if statuses != "200 (3), 404 (3), 429 (3)" {
		t.Fatalf("statuses row %q in %v", statuses, res.Report.Rows)
	}
}

// A storm the time budget ends is cut short, and its mean attempt rate is
// over the time the clients ran, not a planned one.
func TestClientsCutShortRateOverTimeSpent(t *testing.T) {
	srv := startBuiltin(t, "builtin:token_bucket?rate=1/s&burst=1")
	res, err := Run(context.Background(), Clients{N: 4, Goal: 1000, Backoff: true, Base: 10 * time.Millisecond, Cap: 20 * time.Millisecond},
		RunOptions{Request: mustRequest(t, srv.URL), Options: Options{MaxDuration: 300 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Report.Metrics.Clients
	// The clients stop at the budget's end; a loaded machine may take a
	// scheduling quantum or two to notice.
	if res.Stopped != StopTimeBudget || !m.CutShort || m.Elapsed < 250*time.Millisecond || m.Elapsed > time.Second {
		t.Fatalf("stopped %q, %+v", res.Stopped, m)
	}
	if got := m.MeanRate * m.Elapsed.Seconds(); math.Abs(got-float64(m.Attempts)) > 1e-6 || !strings.Contains(res.Report.Verdict, "cut short") {
		t.Fatalf("mean rate %.1f/s × %v ≠ %d attempts; verdict %q", m.MeanRate, m.Elapsed, m.Attempts, res.Report.Verdict)
	}
}

// Extend moves the live engine's time budget on: a run of 200 ms extended
// to 600 ms is alive past 200 ms and ends at the time budget no earlier
// than 600 ms; an extension to less changes nothing.
func TestEngineExtendMovesTheTimeBudget(t *testing.T) {
	srv := startBuiltin(t, "builtin:none")
	e := New(mustRequest(t, srv.URL), Options{MaxDuration: 200 * time.Millisecond})
	run := e.Begin(context.Background())
	e.Extend(600 * time.Millisecond)
	e.Extend(300 * time.Millisecond) // less than the budget now: ignored
	time.Sleep(400 * time.Millisecond)
	if run.Err() != nil {
		t.Fatalf("run ended at 400 ms with the budget extended to 600 ms: %v", context.Cause(run))
	}
	<-run.Done()
	if took := time.Since(e.Start()); took < 600*time.Millisecond {
		t.Errorf("run ended after %s, before the extended budget of 600 ms", took)
	}
	e.Finish()
	if e.Stopped() != StopTimeBudget || !hasNote(e.Notes(), "stopped after 600ms") {
		t.Errorf("stopped %q, notes %q", e.Stopped(), e.Notes())
	}
}
