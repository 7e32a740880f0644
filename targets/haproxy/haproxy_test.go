//go:build unix

package haproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/internal/testenv"
	"github.com/ratecheck/ratecheck/targets/internal/proc"
)

// td is a config in the repository's testdata/haproxy.
func td(name string) string { return filepath.Join("..", "..", "testdata", "haproxy", name) }

func needHAProxy(t *testing.T) { t.Helper(); testenv.NeedHAProxy(t) }

// startHAProxy starts a config and registers a cleanup that stops it and
// checks that nothing is left.
func startHAProxy(t *testing.T, conf string, opt Options) *Instance {
	t.Helper()
	needHAProxy(t)
	inst, err := Start(context.Background(), conf, opt)
	return testenv.Started(t, conf, inst, err, assertGone)
}

// assertGone checks that nothing of the instance is left (see
// testenv.AssertStopped) and that this test process has no child left.
func assertGone(t testing.TB, inst *Instance) {
	t.Helper()
	testenv.AssertStopped(t, inst.Pid, inst.Dir, inst.opt.Keep)
	testenv.NoChildrenLeft(t)
}

var client = &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 5 * time.Second}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b)
}

// statuses sends n requests one after another and returns their statuses.
func statuses(t *testing.T, url string, n int) []int {
	t.Helper()
	var out []int
	for range n {
		s, _ := get(t, url)
		out = append(out, s)
	}
	return out
}

func countOf(ss []int, status int) int {
	n := 0
	for _, s := range ss {
		if s == status {
			n++
		}
	}
	return n
}

// The snippet's sliding counter admits 10 per 10 s: twelve requests sent
// back to back (far less than a second) get ten 200s from the backend, then
// 429. Polling the ready path first must not count.
func TestSnippetLimits(t *testing.T) {
	inst := startHAProxy(t, td("req-rate.cfg"), Options{})
	if !strings.HasPrefix(inst.URL, "http://127.0.0.1:") {
		t.Fatalf("URL %s", inst.URL)
	}
	for range 20 {
		if s, _ := get(t, strings.TrimSuffix(inst.URL, "/")+ReadyPath); s != 204 {
			t.Fatalf("ready path answered %d", s)
		}
	}
	if s, body := get(t, inst.URL+"x"); s != 200 || body != "ok\n" {
		t.Fatalf("first request: %d %q, want 200 from the loopback backend", s, body)
	}
	got := statuses(t, inst.URL, 11)
	if countOf(got[:9], 200) != 9 || countOf(got[9:], 429) != 2 {
		t.Errorf("statuses %v: want 9 more 200s (10 in all), then 429", got)
	}
}

// A full config runs with its own rules: its bind and servers are
// rewritten, its global lines that touch the system dropped.
func TestFullConfig(t *testing.T) {
	inst := startHAProxy(t, td("full.cfg"), Options{})
	got := statuses(t, inst.URL, 7)
	if want := []int{200, 200, 200, 200, 200, 429, 429}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("statuses %v, want %v (gt 5 per 2 s)", got, want)
	}
	notes := strings.Join(inst.Notes, "\n")
	for _, want := range []string{"full.cfg:2: `daemon` dropped", "full.cfg:15: `bind *:8080` rewritten", "full.cfg:24: server \"app1\" (10.0.0.5:8080) now forwards"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	cfg, err := os.ReadFile(inst.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cfg), "\n    server app1 10.0.0.5") || strings.Contains(string(cfg), "\n    daemon") {
		t.Errorf("generated config still holds the user's server or daemon:\n%s", cfg)
	}
}

func TestBadConfigIsAConfigErrorAtTheUsersLine(t *testing.T) {
	needHAProxy(t)
	tmp := testenv.IsolateTemp(t)
	_, err := Start(context.Background(), td("bad.cfg"), Options{})
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("error %T %v, want *ConfigError", err, err)
	}
	if ce.File != td("bad.cfg") || ce.Line != 4 || !strings.Contains(ce.HAProxyMessage, "'deny_statuz'") {
		t.Errorf("error at %s:%d %q, want %s:4 naming deny_statuz", ce.File, ce.Line, ce.HAProxyMessage, td("bad.cfg"))
	}
	want := td("bad.cfg") + ":4: haproxy rejected the configuration: "
	if !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), tmp) {
		t.Errorf("Error() = %q, want one line starting %q that does not name the generated file", err, want)
	}
	testenv.AssertEmptyDir(t, tmp)
	testenv.NoChildrenLeft(t)
}

func TestStopAndCancel(t *testing.T) {
	needHAProxy(t)
	inst, err := Start(context.Background(), td("req-rate.cfg"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(-inst.Pid, 0); err != nil {
		t.Fatalf("no process group %d: %v", inst.Pid, err)
	}
	if err := inst.Stop(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, inst)
	if err := inst.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inst, err = Start(ctx, td("req-rate.cfg"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-inst.Done():
	case <-time.After(3 * proc.StopGrace):
		t.Fatal("cancelling the context did not stop haproxy")
	}
	assertGone(t, inst)
}

// A port taken between choosing it and haproxy binding it: Start retries
// with another port, and gives up cleanly when every attempt fails.
func TestPortTakenRetries(t *testing.T) {
	needHAProxy(t)
	// Each port's readiness probe may reach the test's listener, which
	// accepts and never answers: up to the probe's 1 s timeout a port.
	testenv.CheckPortRetry(t, &freePort, 6*time.Second,
		func() string { return startHAProxy(t, td("req-rate.cfg"), Options{}).URL },
		func() error { _, err := Start(context.Background(), td("req-rate.cfg"), Options{}); return err })
}

func TestMissingBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	saved := fallbackBins
	fallbackBins = []string{filepath.Join(t.TempDir(), "haproxy")}
	defer func() { fallbackBins = saved }()
	if _, err := Start(context.Background(), td("req-rate.cfg"), Options{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("err %v, want ErrNotFound", err)
	}
	if _, err := Start(context.Background(), td("req-rate.cfg"), Options{Bin: "/nonexistent/haproxy"}); err == nil || !strings.Contains(err.Error(), "/nonexistent/haproxy") {
		t.Errorf("explicit missing Bin: %v", err)
	}
}

// Keep leaves the generated config for debugging: after Stop, and named in
// the error of a config haproxy refused.
func TestKeep(t *testing.T) {
	needHAProxy(t)
	inst := startHAProxy(t, td("req-rate.cfg"), Options{Keep: true})
	t.Cleanup(func() { os.RemoveAll(inst.Dir) })
	if err := inst.Stop(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(inst.ConfigPath); err != nil || !strings.Contains(string(b), "http-request track-sc0 src") {
		t.Errorf("Keep: generated config not kept (%v)", err)
	}
	tmp := testenv.IsolateTemp(t)
	_, err := Start(context.Background(), td("bad.cfg"), Options{Keep: true})
	if err == nil || !strings.Contains(err.Error(), "The generated config is kept at "+tmp) {
		t.Errorf("error %v does not say where the kept config is", err)
	}
	testenv.NoChildrenLeft(t)
}
