package attack

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A server that closes every keep-alive connection after its first answer
// (without saying so): a paced run's lanes find their idle connections
// closed, or write to one the server is closing, and every request is still
// answered — on a fresh connection, as net/http would.
func TestPacedRunSurvivesServerClosingIdleConnections(t *testing.T) {
	addr := rawServer(t, func(c net.Conn) {
		go func() {
			defer c.Close()
			br := bufio.NewReader(c)
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if line == "\r\n" {
					_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
					return // close after one answer, keep-alive notwithstanding
				}
			}
		}()
	})
	rep, _, _ := runAgainst(t, "http://"+addr+"/", Steady{Rate: 500, Duration: 200 * time.Millisecond}, Options{})
	if rep.Summary.Admitted != 100 || rep.Summary.Errors != 0 {
		t.Fatalf("summary %+v", rep.Summary)
	}
}

// When a paced run is over, its connections are the pool's again and the
// engine closes them at Finish: after two paced runs on one engine, the
// server sees every connection it opened closed.
func TestPacedRunLeavesNoConnectionOpen(t *testing.T) {
	var opened, closed atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			opened.Add(1)
		case http.StateClosed, http.StateHijacked:
			closed.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	req, err := NewRequest("GET", srv.URL, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	col := NewCollector(true)
	e := New(req, Options{}, col.Add)
	ctx := e.Begin(context.Background())
	e.Schedule(ctx, 50, func(i int) Shot { return Shot{At: time.Duration(i) * time.Millisecond} })
	e.Wait()
	next := e.Now() + 5*time.Millisecond
	e.Schedule(ctx, 50, func(i int) Shot { return Shot{At: next + time.Duration(i)*time.Millisecond} })
	e.Wait()
	e.Finish()
	if n := len(col.Phase("")); n != 100 {
		t.Fatalf("%d results", n)
	}
	deadline := time.Now().Add(5 * time.Second) // the server notices a close asynchronously
	for closed.Load() < opened.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections opened, %d closed after Finish", opened.Load(), closed.Load())
		}
		time.Sleep(time.Millisecond)
	}
}

// Ctrl-C during a paced run against a server that never answers: the
// requests in flight on lanes end at once as canceled, not at the timeout.
func TestPacedRunCanceledMidFlight(t *testing.T) {
	var mu sync.Mutex
	var held []net.Conn
	addr := rawServer(t, func(c net.Conn) {
		mu.Lock()
		held = append(held, c) // read nothing, answer nothing
		mu.Unlock()
	})
	req, err := NewRequest("GET", "http://"+addr+"/", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	col := NewCollector(true)
	e := New(req, Options{Timeout: 30 * time.Second}, col.Add)
	parent, cancel := context.WithCancel(context.Background())
	ctx := e.Begin(parent)
	time.AfterFunc(150*time.Millisecond, cancel)
	began := time.Now()
	e.Schedule(ctx, 20, func(i int) Shot { return Shot{At: time.Duration(i) * 5 * time.Millisecond} })
	e.Wait()
	e.Finish()
	if took := time.Since(began); took > 10*time.Second {
		t.Fatalf("canceled run took %s", took)
	}
	rs := col.Phase("")
	if len(rs) == 0 {
		t.Fatal("no results")
	}
	for _, r := range rs {
		if r.Error == "" || !strings.Contains(r.Error, "cancel") {
			t.Fatalf("result %+v, want canceled", r)
		}
	}
}

// The engine reports the CPU the process spent on a run, and per request:
// a busy loop that burns a known amount of CPU inside the run (measured by
// the same clock, bounded in wall time) shows up in it.
func TestEngineReportsItsCPU(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	req, err := NewRequest("GET", srv.URL, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	e := New(req, Options{})
	ctx := e.Begin(context.Background())
	e.Schedule(ctx, 20, func(i int) Shot { return Shot{At: time.Duration(i) * time.Millisecond} })
	u0, s0, ok := processCPU()
	if !ok {
		t.Skip("no CPU accounting on this platform")
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if u, s, _ := processCPU(); u+s-u0-s0 >= 40*time.Millisecond {
			break
		}
	}
	e.Wait()
	e.Finish()
	u := e.CPU()
	if u.Requests != 20 || u.Total < 40*time.Millisecond || u.Total != u.User+u.System || u.PerRequest != u.Total/20 {
		t.Fatalf("CPU %+v", u)
	}
}
