//go:build unix

package nginx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/internal/testenv"
	"github.com/ratecheck/ratecheck/targets/internal/proc"
)

// Staircase tolerance. A queued request is released by an nginx timer; the
// delay is computed in whole milliseconds from nginx's cached clock
// (ngx_current_msec, refreshed once per event-loop iteration) and the timer
// fires at millisecond granularity: ~2 ms. Each response then crosses
// loopback twice (nginx→backend→nginx→client, <1 ms) and must be scheduled:
// the nginx worker and this test process (under -race, with the backend
// server in it) share 2 cores with whatever else the machine runs. A step is
// the difference of two such measurements, so the errors of both ends add.
// On a run where this process was never more than maxStall late (see
// testenv.StallWatch), 30 ms bounds all of that with margin while staying
// far below the 100 ms step, so a wrong step, or no staircase, cannot pass.
const stepTolerance = 30 * time.Millisecond

// maxStall is the scheduling delay beyond which a run says nothing about
// nginx's timing. On a heavily loaded 2-core VM (load average 7, two fuzzers
// at 100%) this process's 2 ms timer was observed firing up to 830 ms late;
// nginx's own log showed exact 100 ms steps in the same conditions.
const maxStall = 15 * time.Millisecond

// maxSpread is how far apart the volley's requests may be written for the
// exact counts to hold: nginx forgives one request per 1/r (100 ms at 10r/s),
// so requests written within 80 ms of each other all meet the same bucket.
const maxSpread = 80 * time.Millisecond

// run is one volley against a fresh nginx.
type run struct {
	shots []shot
	inst  *Instance // stopped; Dir kept only with Options.Keep
	stall time.Duration
}

// measure fires a volley of n GETs of path at a fresh nginx started from
// conf and hands the run to check. A failing check fails the test, unless
// the run was disturbed (requests written more than maxSpread apart, or this
// process stalled more than maxStall): then it is repeated on a fresh nginx,
// up to a budget. A correct result is accepted whatever the load.
func measure(t *testing.T, conf, path string, n int, opt Options, check func(r run) error) run {
	t.Helper()
	needNginx(t)
	const attempts = 20
	budget := time.Now().Add(90 * time.Second)
	var last error
	for attempt := 1; attempt <= attempts && time.Now().Before(budget); attempt++ {
		inst, err := Start(context.Background(), conf, opt)
		if err != nil {
			t.Fatalf("Start(%s): %v", conf, err)
		}
		stop := make(chan struct{})
		stalls := testenv.StallWatch(stop)
		shots := volley(t, inst, path, n)
		close(stop)
		r := run{shots: shots, inst: inst, stall: <-stalls}
		if err := inst.Stop(); err != nil {
			t.Fatalf("Stop: %v", err)
		}
		assertGone(t, inst)
		sp := spread(shots)
		if sp <= maxSpread {
			if last = check(r); last == nil {
				return r
			}
			if r.stall <= maxStall {
				t.Fatalf("%v (undisturbed run: requests written within %v, this process at most %v late)", last, sp, r.stall)
			}
		} else {
			last = fmt.Errorf("requests written %v apart (> %v)", sp, maxSpread)
		}
		t.Logf("attempt %d disturbed (spread %v, stall %v): %v; retrying on a fresh nginx", attempt, sp, r.stall, last)
	}
	t.Fatalf("no undisturbed run of %s within the budget; the machine keeps stalling this process by more than %v. Last result: %v", conf, maxStall, last)
	return run{}
}

func zoneOf(t *testing.T, conf string) Zone {
	t.Helper()
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	zs, err := ParseZones(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return zs[0]
}

func stepOf(z Zone) time.Duration { return time.Duration(float64(time.Second) / z.Rate) }

// staircase checks |L_k − L_0 − k·step| ≤ stepTolerance.
func staircase(lat []shot, step time.Duration) error {
	for k := range lat {
		got := lat[k].done - lat[0].done
		want := time.Duration(k) * step
		if d := got - want; d > stepTolerance || d < -stepTolerance {
			return fmt.Errorf("admitted #%d completed %v after the first, want %v ± %v (latencies %v)", k, got, want, stepTolerance, dones(lat))
		}
	}
	return nil
}

func wantCounts(counts map[int]int, want map[int]int) error {
	for code, n := range want {
		if counts[code] != n {
			return fmt.Errorf("statuses %v, want %v", counts, want)
		}
	}
	if len(counts) != len(want) {
		return fmt.Errorf("statuses %v, want %v", counts, want)
	}
	return nil
}

func TestBurstShaping(t *testing.T) {
	conf := td("burst.conf")
	z := zoneOf(t, conf) // rate=10r/s burst=5: the ground truth comes from the config
	burst := z.Limits[0].Burst
	r := measure(t, conf, "/", 20, Options{}, func(r run) error {
		counts, admitted := tally(r.shots)
		if err := wantCounts(counts, map[int]int{200: burst + 1, 503: 20 - (burst + 1)}); err != nil {
			return err
		}
		if admitted[0].body != "ok\n" {
			return fmt.Errorf("admitted body %q, want the backend's \"ok\\n\"", admitted[0].body)
		}
		return staircase(admitted, stepOf(z))
	})
	_, admitted := tally(r.shots)
	t.Logf("admitted latencies %v (step %v, stall %v)", dones(admitted), stepOf(z), r.stall)
}

func TestBurstNoDelay(t *testing.T) {
	measure(t, td("burst-nodelay.conf"), "/", 20, Options{}, func(r run) error {
		counts, admitted := tally(r.shots)
		if err := wantCounts(counts, map[int]int{200: 6, 503: 14}); err != nil {
			return err
		}
		// No staircase: the first delay would be 100 ms.
		if last := admitted[len(admitted)-1].done; last >= 60*time.Millisecond {
			return fmt.Errorf("slowest admitted request took %v, want < 60ms: nodelay must not queue (latencies %v)", last, dones(admitted))
		}
		return nil
	})
}

func TestBurstDelay(t *testing.T) {
	conf := td("burst-delay.conf")
	z := zoneOf(t, conf)
	l := z.Limits[0] // burst=10 delay=4
	measure(t, conf, "/", 20, Options{}, func(r run) error {
		counts, admitted := tally(r.shots)
		if err := wantCounts(counts, map[int]int{200: l.Burst + 1, 503: 20 - (l.Burst + 1)}); err != nil {
			return err
		}
		// The first request and the first `delay` excess ones pass at once...
		for k := 0; k <= l.Delay; k++ {
			if admitted[k].done >= 60*time.Millisecond {
				return fmt.Errorf("admitted #%d took %v, want < 60ms (latencies %v)", k, admitted[k].done, dones(admitted))
			}
		}
		// ...the rest leave one step apart after them.
		return staircase(admitted[l.Delay:], stepOf(z))
	})
}

func TestRejectStatus(t *testing.T) {
	for conf, want := range map[string]int{
		"status-429.conf":    http.StatusTooManyRequests,
		"burst-nodelay.conf": http.StatusServiceUnavailable, // nginx's default
	} {
		t.Run(conf, func(t *testing.T) {
			measure(t, td(conf), "/", 20, Options{}, func(r run) error {
				counts, _ := tally(r.shots)
				return wantCounts(counts, map[int]int{200: 6, want: 14})
			})
		})
	}
}

func TestTwoZonesLargestDelay(t *testing.T) {
	conf := td("two-zones.conf")
	b, _ := os.ReadFile(conf)
	zs, err := ParseZones(string(b))
	if err != nil {
		t.Fatal(err)
	}
	perIP, global := zs[0], zs[1]
	if stepOf(global) <= stepOf(perIP) {
		t.Fatal("test expects the global zone to be the slower one")
	}
	measure(t, conf, "/", 20, Options{}, func(r run) error {
		counts, admitted := tally(r.shots)
		// The per-address zone (burst=5) rejects first; the global one
		// (burst=20) would take 21.
		if err := wantCounts(counts, map[int]int{200: perIP.Limits[0].Burst + 1, 503: 20 - (perIP.Limits[0].Burst + 1)}); err != nil {
			return err
		}
		// Both zones delay; the larger delay, the global zone's 1/r, applies.
		return staircase(admitted, stepOf(global))
	})
}

func TestRate30PerMinute(t *testing.T) {
	conf := td("rate-30rm.conf")
	if z := zoneOf(t, conf); z.Rate != 0.5 {
		t.Fatalf("rate %v, want 0.5/s", z.Rate)
	}
	measure(t, conf, "/", 20, Options{}, func(r run) error {
		counts, _ := tally(r.shots)
		return wantCounts(counts, map[int]int{200: 1, 503: 19}) // no burst
	})
}

func TestFullConfig(t *testing.T) {
	r := measure(t, td("full.conf"), "/", 20, Options{Keep: true}, func(r run) error {
		defer os.RemoveAll(r.inst.Dir)
		counts, admitted := tally(r.shots)
		if err := wantCounts(counts, map[int]int{200: 3, 429: 17}); err != nil {
			return err
		}
		if admitted[0].ctype != "image/gif" {
			return fmt.Errorf("content type %q, want image/gif from the config's own empty_gif", admitted[0].ctype)
		}
		gen, err := os.ReadFile(r.inst.ConfigPath)
		if err != nil {
			return err
		}
		for _, bad := range []string{"8080", "/run/nginx.pid", "/var/log"} {
			if strings.Contains(string(gen), bad) {
				t.Errorf("generated config still contains %q:\n%s", bad, gen)
			}
		}
		return nil
	})
	if notes := strings.Join(r.inst.Notes, "\n"); !strings.Contains(notes, "full.conf:18: listen `8080`, `[::]:8080` rewritten") {
		t.Errorf("notes %q do not mention the rewritten listen", notes)
	}
}

func get(t *testing.T, base, path string) int {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(base, "/") + path)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestReturnBypassesLimitReq is the evidence for serving snippet content by
// proxy_pass: `return` answers in the rewrite phase, before limit_req. The
// zone allows one request per 62.5 s (1r/m), so timing cannot matter.
func TestReturnBypassesLimitReq(t *testing.T) {
	conf := testenv.WriteConf(t, "return.conf", `limit_req_zone $binary_remote_addr zone=one:1m rate=1r/m;
location / {
    limit_req zone=one;
    return 200 "bypassed\n";
}
location /proxied {
    limit_req zone=one;
}
`)
	inst := startNginx(t, conf, Options{})
	for k := range 5 {
		if s := get(t, inst.URL, "/"); s != 200 {
			t.Errorf("return location, request %d: %d, want 200 (return runs before limit_req)", k, s)
		}
	}
	// The same zone on a content-phase location does limit.
	if a, b := get(t, inst.URL, "/proxied"), get(t, inst.URL, "/proxied"); a != 200 || b != 503 {
		t.Errorf("proxied location: %d, %d; want 200, 503", a, b)
	}
	notes := strings.Join(inst.Notes, "\n")
	if !strings.Contains(notes, "return.conf:4: `return` in `location /`") || !strings.Contains(notes, "never limits") {
		t.Errorf("notes %q should warn about the return at line 4", notes)
	}
}

// The readiness location is never limited, even with the zone exhausted (and
// limit_req inherited from the server level), so warming connections does not
// disturb an experiment.
func TestReadyPathNotLimited(t *testing.T) {
	conf := testenv.WriteConf(t, "server-level.conf", `limit_req_zone $binary_remote_addr zone=one:1m rate=1r/m;
limit_req zone=one;
`)
	inst := startNginx(t, conf, Options{})
	if a, b := get(t, inst.URL, "/"), get(t, inst.URL, "/"); a != 200 || b != 503 {
		t.Fatalf("GET /: %d, %d; want 200, 503", a, b)
	}
	for range 5 {
		if s := get(t, inst.URL, ReadyPath); s != http.StatusNoContent {
			t.Fatalf("%s: %d with the zone exhausted, want 204", ReadyPath, s)
		}
	}
}

func TestUpstreamOption(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "from upstream %s %s", r.Method, r.URL.Path)
	}))
	defer backend.Close()
	inst := startNginx(t, td("burst-nodelay.conf"), Options{Upstream: backend.URL})
	req, _ := http.NewRequest(http.MethodPost, inst.URL+"x", strings.NewReader("body"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "from upstream POST /x" {
		t.Fatalf("got %d %q", resp.StatusCode, b)
	}
	if _, err := Start(context.Background(), td("burst.conf"), Options{Upstream: backend.URL + "/api"}); err == nil {
		t.Fatal("Start accepted an upstream URL with a path")
	}
}

func TestBadConfig(t *testing.T) {
	needNginx(t)
	tmp := testenv.IsolateTemp(t)
	for _, tc := range []struct {
		conf string
		line int
		msg  string
	}{
		{"bad.conf", 5, `[emerg] invalid parameter "nodely"`},
		{"bad-zone.conf", 6, `[emerg] zero size shared memory zone "nosuch"`},
	} {
		inst, err := Start(context.Background(), td(tc.conf), Options{})
		if err == nil {
			inst.Stop()
			t.Fatalf("%s: Start succeeded", tc.conf)
		}
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Fatalf("%s: error %T %v, want *ConfigError", tc.conf, err, err)
		}
		if !strings.HasSuffix(ce.File, filepath.Join("testdata", "nginx", tc.conf)) || ce.Line != tc.line {
			t.Errorf("%s: error at %s:%d, want testdata/nginx/%s:%d", tc.conf, ce.File, ce.Line, tc.conf, tc.line)
		}
		if ce.NginxMessage != tc.msg {
			t.Errorf("%s: NginxMessage %q, want %q", tc.conf, ce.NginxMessage, tc.msg)
		}
		want := fmt.Sprintf("%s:%d: nginx rejected the configuration: %s", td(tc.conf), tc.line, tc.msg)
		if !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: Error() = %q, want one paragraph starting %q", tc.conf, err, want)
		}
		if strings.Contains(err.Error(), tmp) {
			t.Errorf("%s: Error() names the generated file: %q", tc.conf, err)
		}
		testenv.AssertEmptyDir(t, tmp)
	}
}

func TestBadConfigKeep(t *testing.T) {
	needNginx(t)
	tmp := testenv.IsolateTemp(t)
	_, err := Start(context.Background(), td("bad.conf"), Options{Keep: true})
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v, want *ConfigError", err)
	}
	if !strings.Contains(err.Error(), "generated config is kept at "+tmp) {
		t.Errorf("Error() does not say where the kept config is: %q", err)
	}
	if ps := testenv.ProcsMentioning(tmp); len(ps) > 0 {
		t.Errorf("processes left: %v", ps)
	}
}

func TestStopKillsProcessGroup(t *testing.T) {
	needNginx(t)
	inst, err := Start(context.Background(), td("burst.conf"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	members := testenv.GroupMembers(inst.Pid)
	if len(members) < 2 {
		t.Errorf("process group %d has %v, want the master and a worker", inst.Pid, members)
	}
	if err := inst.Stop(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, inst)
	for _, pid := range members {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			t.Errorf("pid %d of the group still exists", pid)
		}
	}
	if err := inst.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	select {
	case <-inst.Done():
	default:
		t.Error("Done not closed after Stop")
	}
}

// Stop must not wait for requests that limit_req is still delaying, as
// nginx's graceful SIGQUIT would: at 1r/s with burst=8 the last of 9 requests
// is queued 8 s out.
func TestStopWhileRequestsQueued(t *testing.T) {
	conf := testenv.WriteConf(t, "queue.conf", `limit_req_zone $binary_remote_addr zone=one:1m rate=1r/s;
limit_req zone=one burst=8;
`)
	needNginx(t)
	inst, err := Start(context.Background(), conf, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 9
	answered := make(chan struct{}, n)
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	defer client.CloseIdleConnections()
	for range n {
		go func() {
			resp, err := client.Get(inst.URL)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			answered <- struct{}{}
		}()
	}
	<-answered // one passes at once; the others wait 1, 2, ... 8 s
	t0 := time.Now()
	if err := inst.Stop(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > 4*time.Second {
		t.Errorf("Stop took %v with requests queued up to 8 s: it must not wait for the queue", d)
	}
	assertGone(t, inst)
	for range n - 1 {
		<-answered // every client got an answer or a closed connection
	}
}

func TestContextCancelStops(t *testing.T) {
	needNginx(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inst, err := Start(ctx, td("burst.conf"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(testenv.GroupMembers(inst.Pid)) == 0 {
		t.Fatal("no nginx process running")
	}
	cancel()
	select {
	case <-inst.Done():
	case <-time.After(3 * proc.StopGrace):
		t.Fatal("cancelling the context did not stop nginx")
	}
	assertGone(t, inst)
	if err := inst.Stop(); err != nil {
		t.Errorf("Stop after cancel: %v", err)
	}
}

func TestCancelledContextBeforeStart(t *testing.T) {
	needNginx(t)
	tmp := testenv.IsolateTemp(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Start(ctx, td("burst.conf"), Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	testenv.AssertEmptyDir(t, tmp)
}

func TestKeep(t *testing.T) {
	inst := startNginx(t, td("burst.conf"), Options{Keep: true})
	t.Cleanup(func() { os.RemoveAll(inst.Dir) })
	if err := inst.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"nginx.conf", "error.log", "stderr.log"} {
		if _, err := os.Stat(filepath.Join(inst.Dir, f)); err != nil {
			t.Errorf("Keep: %v", err)
		}
	}
}

func TestMissingBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	saved := fallbackBins
	fallbackBins = []string{filepath.Join(t.TempDir(), "nginx")}
	defer func() { fallbackBins = saved }()
	_, err := Start(context.Background(), td("burst.conf"), Options{})
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("err %v, want ErrNotFound", err)
	}
	const want = "nginx not found (looked for `nginx` on PATH and /usr/sbin/nginx): install it with `apt-get install nginx-light` (Debian/Ubuntu) or your platform's package, or pass --nginx-bin"
	if err.Error() != want {
		t.Errorf("message %q\nwant    %q", err, want)
	}
	_, err = Start(context.Background(), td("burst.conf"), Options{Bin: "/nonexistent/nginx"})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/nginx") {
		t.Errorf("explicit missing Bin: %v", err)
	}
}

// A port taken between choosing it and nginx binding it: Start retries with
// another port, and gives up cleanly when every attempt fails.
func TestPortTakenRetries(t *testing.T) {
	needNginx(t)
	// nginx retries a bind 5 times 500 ms apart on its own (7.5 s for the
	// three ports): Start must cut that short.
	testenv.CheckPortRetry(t, &freePort, 3*time.Second,
		func() string { return startNginx(t, td("burst.conf"), Options{}).URL },
		func() error { _, err := Start(context.Background(), td("burst.conf"), Options{}); return err })
}

func TestMissingIncludeIsConfigError(t *testing.T) {
	needNginx(t) // Start resolves the binary before reading the config
	dir := t.TempDir()
	conf := filepath.Join(dir, "x.conf")
	os.WriteFile(conf, []byte("\n\ninclude nothere.conf;\n"), 0o644)
	_, err := Start(context.Background(), conf, Options{})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.File != conf || ce.Line != 3 || ce.NginxMessage != "" {
		t.Fatalf("err %v", err)
	}
	if !strings.HasPrefix(err.Error(), conf+":3: ratecheck cannot run this nginx config: include \"nothere.conf\"") {
		t.Errorf("Error() = %q", err)
	}
}
