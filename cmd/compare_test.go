package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/internal/testenv"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/report"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/launch"
	"github.com/ratecheck/ratecheck/targets/nginx"
)

// Live nginx tests. They start real nginx processes on 127.0.0.1 from the
// configs in testdata/nginx (scripts/test installs nginx) and skip only
// when nginx is not installed.

func needNginx(t *testing.T) { testenv.NeedNginx(t) }

// inRepoRoot makes the test run from the repository root, so that targets
// read as a user would write them: nginx:testdata/nginx/burst.conf.
func inRepoRoot(t *testing.T) { t.Chdir("..") }

// assertNothingLeft checks that no nginx runs from a directory under tmp and
// that every such directory is gone.
func assertNothingLeft(t *testing.T, tmp string) {
	t.Helper()
	if ps := testenv.ProcsMentioning(tmp); len(ps) > 0 {
		t.Errorf("processes still running from %s: %v", tmp, ps)
	}
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		t.Errorf("left behind in %s: %s", tmp, e.Name())
	}
}

// Timing physics, the same as targets/nginx's tests. nginx releases a queued
// request from a millisecond timer on its cached millisecond clock (~2 ms);
// the answer crosses loopback to the backend (which runs in this test
// process) and back, < 1 ms each way; then the engine's reader in this
// process must be scheduled. A step is the difference of two such
// measurements, so both ends' errors add. On a run where this process was
// never more than maxStall late, 30 ms bounds all of that with margin and
// stays far below the 100 ms step, so a missing or wrong staircase cannot
// pass. A loaded machine stalls a process by hundreds of ms: a run that
// fails while this process stalled more than maxStall, or whose burst was
// written more than maxSpread apart (nginx forgives one request per 100 ms,
// so the counts hold only if every request meets the same bucket), proves
// nothing and is repeated on a fresh nginx. A correct result is accepted
// whatever the load.
const (
	stepTolerance = 30 * time.Millisecond
	maxStall      = 15 * time.Millisecond
	maxSpread     = 80 * time.Millisecond
)

// untilUndisturbed runs attempt until it passes. A failure of an undisturbed
// attempt fails the test at once; a disturbed one is retried within a budget.
// attempt returns the send spread it saw (0 if unknown) and its verdict.
func untilUndisturbed(t *testing.T, budget time.Duration, attempt func() (spread time.Duration, err error)) {
	t.Helper()
	deadline := time.Now().Add(budget)
	var last error
	for n := 1; n == 1 || time.Now().Before(deadline); n++ {
		stop := make(chan struct{})
		stalls := testenv.StallWatch(stop)
		sp, err := attempt()
		close(stop)
		stall := <-stalls
		if err == nil {
			return
		}
		last = err
		if stall <= maxStall && sp <= maxSpread {
			t.Fatalf("%v (undisturbed run: burst written within %v, this process at most %v late)", err, sp, stall)
		}
		t.Logf("attempt %d disturbed (spread %v, stall %v): %v; retrying on a fresh target", n, sp, stall, err)
	}
	t.Fatalf("no undisturbed run within %v; the machine keeps stalling this process by more than %v. Last result: %v", budget, maxStall, last)
}

// burstRun is one `ratecheck attack --profile burst` through Run().
type burstRun struct {
	m        results.BurstMetrics
	statuses map[int]int     // the burst's statuses, from the results file
	admitted []time.Duration // admitted requests' latencies, sorted
	stderr   string
}

func attackBurst(t *testing.T, target string, extra ...string) (burstRun, error) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "r.jsonl")
	args := append([]string{"attack", "--profile", "burst", "--burst", "20", "--idle", "300ms", "-o", "json", "--out", out}, extra...)
	args = append(args, target)
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
	}
	var rep struct {
		Metrics results.BurstMetrics `json:"metrics"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	rec, err := results.ReadStreamFile(out)
	if err != nil {
		t.Fatal(err)
	}
	r := burstRun{m: rep.Metrics, statuses: map[int]int{}, stderr: stderr.String()}
	for _, res := range rec.Results {
		if res.Phase != "burst" {
			continue
		}
		if res.Error != "" {
			return r, fmt.Errorf("request %d failed: %s", res.Seq, res.Error)
		}
		r.statuses[res.Status]++
		if res.Admitted() {
			r.admitted = append(r.admitted, res.Latency())
		}
	}
	sort.Slice(r.admitted, func(i, j int) bool { return r.admitted[i] < r.admitted[j] })
	return r, nil
}

func wantStatuses(got, want map[int]int) error {
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Errorf("statuses %v, want %v", got, want)
	}
	return nil
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(100 * time.Microsecond)
	}
	return out
}

// nginxZone reads the ground truth from the config itself.
func nginxZone(t *testing.T, conf string) (step time.Duration, burst int) {
	t.Helper()
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	zs, err := nginx.ParseZones(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return time.Duration(float64(time.Second) / zs[0].Rate), zs[0].Limits[0].Burst
}

// burst.conf (rate=10r/s burst=5, no nodelay) under `ratecheck attack`: of 20
// released at once, 1+5 are admitted, the 5 excess ones queued 1/r apart, 14
// rejected with nginx's default 503.
func TestAttackNginxShaping(t *testing.T) {
	needNginx(t)
	inRepoRoot(t)
	conf := "testdata/nginx/burst.conf"
	step, burst := nginxZone(t, conf) // 100 ms, 5
	untilUndisturbed(t, 60*time.Second, func() (time.Duration, error) {
		r, err := attackBurst(t, "nginx:"+conf)
		if err != nil {
			return r.m.SendSpread, err
		}
		if err := wantStatuses(r.statuses, map[int]int{200: burst + 1, 503: 20 - (burst + 1)}); err != nil {
			return r.m.SendSpread, err
		}
		if r.m.Admitted != burst+1 || r.m.Rejected != 20-(burst+1) || r.m.Delayed != burst {
			return r.m.SendSpread, fmt.Errorf("metrics admitted %d, delayed %d, rejected %d; want %d, %d, %d",
				r.m.Admitted, r.m.Delayed, r.m.Rejected, burst+1, burst, 20-(burst+1))
		}
		for k, l := range r.admitted {
			want := time.Duration(k) * step
			if d := l - r.admitted[0] - want; d > stepTolerance || d < -stepTolerance {
				return r.m.SendSpread, fmt.Errorf("admitted #%d completed %v after the first, want %v ± %v (latencies %v)",
					k, l-r.admitted[0], want, stepTolerance, roundAll(r.admitted))
			}
		}
		t.Logf("admitted latencies %v", roundAll(r.admitted))
		return r.m.SendSpread, nil
	})
}

// burst-nodelay.conf: 6 admitted at once, no staircase, 14 rejected.
func TestAttackNginxNoDelay(t *testing.T) {
	needNginx(t)
	inRepoRoot(t)
	untilUndisturbed(t, 60*time.Second, func() (time.Duration, error) {
		r, err := attackBurst(t, "nginx:testdata/nginx/burst-nodelay.conf")
		if err != nil {
			return r.m.SendSpread, err
		}
		if err := wantStatuses(r.statuses, map[int]int{200: 6, 503: 14}); err != nil {
			return r.m.SendSpread, err
		}
		// No staircase: a queued request would wait 100 ms.
		if spread := r.admitted[len(r.admitted)-1] - r.admitted[0]; spread >= 50*time.Millisecond || r.m.Delayed != 0 {
			return r.m.SendSpread, fmt.Errorf("admitted latencies %v (%d delayed): nodelay must not queue", roundAll(r.admitted), r.m.Delayed)
		}
		return r.m.SendSpread, nil
	})
}

// nginx rejects with 503 unless limit_req_status says otherwise.
func TestAttackNginxRejectStatus(t *testing.T) {
	needNginx(t)
	inRepoRoot(t)
	for conf, status := range map[string]int{"burst-nodelay.conf": 503, "status-429.conf": 429} {
		t.Run(conf, func(t *testing.T) {
			untilUndisturbed(t, 60*time.Second, func() (time.Duration, error) {
				r, err := attackBurst(t, "nginx:testdata/nginx/"+conf, "--tail", "0")
				if err != nil {
					return r.m.SendSpread, err
				}
				return r.m.SendSpread, wantStatuses(r.statuses, map[int]int{200: 6, status: 14})
			})
		})
	}
}

// A config nginx rejects: exit 2, one line with nginx's own message at the
// user's file:line, and no nginx left running.
func TestNginxBadConfigCLI(t *testing.T) {
	needNginx(t)
	inRepoRoot(t)
	out := t.TempDir()
	tmp := testenv.IsolateTemp(t)
	for _, cmd := range [][]string{
		{"attack", "--profile", "burst", "--out", filepath.Join(out, "a.jsonl"), "nginx:testdata/nginx/bad.conf"},
		{"probe", "--out", filepath.Join(out, "p.jsonl"), "nginx:testdata/nginx/bad.conf"},
		{"compare", "--out", out + "/", "nginx:testdata/nginx/burst.conf", "nginx:testdata/nginx/bad.conf"},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), cmd, &stdout, &stderr)
		msg := strings.TrimSpace(stderr.String())
		if code != ExitUsage {
			t.Errorf("%s: exit %d, want 2; stderr %q", cmd[0], code, msg)
		}
		for _, want := range []string{"testdata/nginx/bad.conf:5", `[emerg] invalid parameter "nodely"`} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: stderr %q does not contain %q", cmd[0], msg, want)
			}
		}
		if strings.Count(msg, "\n") != 0 || strings.Contains(msg, "goroutine") {
			t.Errorf("%s: stderr is not one line: %q", cmd[0], msg)
		}
		assertNothingLeft(t, tmp)
	}
	// compare starts every target before sending anything: no results file.
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("results files written before the bad config was found: %v", ents)
	}
}

// Without nginx an nginx: target is an environment problem: exit 3 with the
// install hint. (Runs only where nginx is not installed.)
func TestNginxMissingCLI(t *testing.T) {
	if _, err := nginx.FindBinary(""); err == nil {
		t.Skip("nginx is installed; the missing-nginx path is tested in targets/launch")
	}
	inRepoRoot(t)
	var stderr bytes.Buffer
	code := Run(context.Background(), []string{"attack", "--profile", "burst", "--out", filepath.Join(t.TempDir(), "r.jsonl"),
		"nginx:testdata/nginx/burst.conf"}, io.Discard, &stderr)
	if code != ExitUntested || !strings.Contains(stderr.String(), "install") {
		t.Fatalf("exit %d, stderr %q; want 3 and the install hint", code, stderr.String())
	}
}

// Cancelling the run (what Ctrl-C does through signal.NotifyContext) stops
// nginx and removes its directory.
func TestNginxStoppedOnCancel(t *testing.T) {
	needNginx(t)
	inRepoRoot(t)
	out := filepath.Join(t.TempDir(), "r.jsonl")
	tmp := testenv.IsolateTemp(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exit := make(chan int, 1)
	go func() {
		exit <- Run(ctx, []string{"attack", "--profile", "burst", "--idle", "30s", "--out", out, "nginx:testdata/nginx/burst.conf"}, io.Discard, io.Discard)
	}()
	deadline := time.Now().Add(15 * time.Second)
	for len(testenv.ProcsMentioning(tmp)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("nginx did not start within 15 s")
		}
		select {
		case code := <-exit:
			t.Fatalf("attack exited %d before it was cancelled", code)
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	select {
	case code := <-exit:
		t.Logf("attack exited %d after cancel", code)
	case <-time.After(20 * time.Second):
		t.Fatal("attack did not return within 20 s of cancel")
	}
	assertNothingLeft(t, tmp)
}

// parseTable reads report.Table's box drawing back into label → cells.
func parseTable(text string) map[string][]string {
	rows := map[string][]string{}
	for _, ln := range strings.Split(text, "\n") {
		if !strings.HasPrefix(ln, "│") {
			continue
		}
		parts := strings.Split(strings.Trim(ln, "│"), "│")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		rows[parts[0]] = parts[1:]
	}
	return rows
}

// The compare example: a shaping and a policing nginx side by side.
func TestCompareNginxShapingVsPolicing(t *testing.T) {
	needNginx(t)
	inRepoRoot(t)
	out := t.TempDir()
	tmp := testenv.IsolateTemp(t)
	a, b := "nginx:testdata/nginx/burst.conf", "nginx:testdata/nginx/burst-nodelay.conf"
	t0 := time.Now()
	untilUndisturbed(t, 40*time.Second, func() (time.Duration, error) {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), []string{"compare", "--profile", "burst", "--out", out + "/", a, b}, &stdout, &stderr)
		if code != 0 {
			t.Fatalf("exit %d: %s\n%s", code, stderr.String(), stdout.String())
		}
		tab := parseTable(stdout.String())
		var spread time.Duration
		for _, s := range tab["send spread"] {
			if v, err := strconv.ParseFloat(strings.TrimSuffix(s, " ms"), 64); err == nil {
				spread = max(spread, time.Duration(v*float64(time.Millisecond)))
			}
		}
		check := func(label string, want ...string) error {
			if got := tab[label]; fmt.Sprint(got) != fmt.Sprint(want) {
				return fmt.Errorf("row %q = %q, want %q\n%s", label, got, want, stdout.String())
			}
			return nil
		}
		if err := check("spec", a, b); err != nil {
			t.Fatal(err) // not timing: the table itself is wrong
		}
		if err := check("rejection status", "503", "503"); err != nil {
			t.Fatal(err)
		}
		// Stock nginx answers 503 without Retry-After: both grades are
		// capped for it.
		if g := tab["grade"]; len(g) != 2 || !strings.Contains(g[0], "status.429") || !strings.Contains(g[1], "status.429") {
			t.Fatalf("grade row %q does not name the 503 cap", g)
		}
		for _, c := range []struct {
			label string
			want  []string
		}{
			{"admitted in the burst", []string{"6", "6"}},
			{"of which delayed (queued)", []string{"5", "0"}},
			{"rejected", []string{"14", "14"}},
		} {
			if err := check(c.label, c.want...); err != nil {
				return spread, err
			}
		}
		// The tail ran: both sustain about nginx's 10 r/s.
		for i, s := range tab["sustained admitted rate"] {
			var v float64
			if _, err := fmt.Sscanf(s, "%f/s", &v); err != nil || v < 7 || v > 14 {
				return spread, fmt.Errorf("target %d: sustained rate %q, want about 10/s (11.3 with the shaping queue)", i+1, s)
			}
		}
		if n := len(testenv.ProcsMentioning(tmp)); n != 0 {
			t.Fatalf("%d processes left after compare", n)
		}
		return spread, nil
	})
	t.Logf("compare took %v", time.Since(t0))
	ents, _ := os.ReadDir(out)
	if len(ents) < 2 {
		t.Errorf("results files: %v, want one per target", ents)
	}
	assertNothingLeft(t, tmp)
}

// compare -o json, on built-in targets (no nginx needed): one entry per
// target with the attack report, a results file, and its grade.
func TestCompareJSON(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	var stdout, stderr bytes.Buffer
	specs := []string{"builtin:token_bucket?rate=1/s&burst=5", "builtin:fixed_window?limit=3&window=10s&align=first"}
	code := Run(context.Background(), append([]string{"compare", "-o", "json", "--burst", "10", "--idle", "10ms", "--tail", "0", "--out", out}, specs...), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var got struct {
		Experiment string `json:"experiment"`
		Targets    []struct {
			Target string `json:"target"`
			Report *struct {
				Profile string `json:"profile"`
				Metrics struct{ Admitted, Rejected int }
				Summary struct {
					Statuses map[int]int `json:"statuses"`
				}
			} `json:"report"`
			Inference *json.RawMessage `json:"inference"`
			Results   string           `json:"results_file"`
			Grade     *json.RawMessage `json:"grade"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	for _, tg := range got.Targets {
		if tg.Grade == nil || !strings.Contains(string(*tg.Grade), `"letter"`) {
			t.Errorf("target without a grade in %s", stdout.String())
		}
	}
	if got.Experiment != "burst" || len(got.Targets) != 2 {
		t.Fatalf("output %+v", got)
	}
	for i, want := range []int{5, 3} {
		tg := got.Targets[i]
		if tg.Target != specs[i] || tg.Report == nil || tg.Report.Profile != "burst" || tg.Inference != nil {
			t.Fatalf("target %d: %+v", i, tg)
		}
		if tg.Report.Metrics.Admitted != want || tg.Report.Metrics.Rejected != 10-want || tg.Report.Summary.Statuses[429] != 10-want {
			t.Errorf("target %d: metrics %+v, statuses %v; want %d admitted", i, tg.Report.Metrics, tg.Report.Summary.Statuses, want)
		}
		if wantPath := fmt.Sprintf("%s-%d.jsonl", out, i+1); tg.Results != wantPath {
			t.Errorf("target %d: results file %q, want %q", i, tg.Results, wantPath)
		}
		f, err := os.Open(tg.Results)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := results.ReadStream(f)
		f.Close()
		if err != nil || rec.Header.Command != "compare" || rec.Header.Target != specs[i] || len(rec.Results) != 10 || rec.End == nil {
			t.Errorf("target %d: results file: %v, header %+v, %d results", i, err, rec.Header, len(rec.Results))
		}
	}
}

// URL targets are not fresh: compare idles --between before each after the
// first; started targets are not waited for.
func TestCompareBetweenURLTargets(t *testing.T) {
	srv, err := launch.Open(context.Background(), "builtin:none")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var stderr bytes.Buffer
	t0 := time.Now()
	code := Run(context.Background(), []string{"compare", "--burst", "3", "--idle", "0s", "--tail", "0", "--between", "400ms",
		"--out", t.TempDir() + "/", srv.URL, srv.URL, "builtin:none"}, io.Discard, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if n := strings.Count(stderr.String(), "idling 400ms before"); n != 1 {
		t.Errorf("idled %d times, want once (before the second URL only):\n%s", n, stderr.String())
	}
	if d := time.Since(t0); d < 400*time.Millisecond {
		t.Errorf("compare took %v, less than --between", d)
	}
}

func TestCompareUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"compare", "builtin:none"},
		{"compare", "--probe", "--profile", "burst", "builtin:none", "builtin:none"},
		{"compare", "--profile", "nosuch", "builtin:none", "builtin:none"},
		{"compare", "--between", "-1s", "builtin:none", "builtin:none"},
		{"compare", "builtin:none", "nginx:"},
		{"compare", "builtin:none", "nginx:/nonexistent/limits.conf"},
		{"compare", "-o", "yaml", "builtin:none", "builtin:none"},
	} {
		var stderr bytes.Buffer
		code := Run(context.Background(), args, io.Discard, &stderr)
		if code != ExitUsage || strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line", args, code, stderr.String())
		}
	}
}

// probeJSON runs `ratecheck probe -o json` through Run(). A panic in the
// probe is turned into a test failure (the deferred cleanup in runProbe still
// stops nginx as it unwinds).
func probeJSON(t *testing.T, target string) (out report.ProbeOutput, stdout string) {
	t.Helper()
	var so, se bytes.Buffer
	var code int
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("probe %s panicked: %v", target, p)
			}
		}()
		code = Run(context.Background(), []string{"probe", "-o", "json", "--out", filepath.Join(t.TempDir(), "p.jsonl"), target}, &so, &se)
	}()
	if err := json.Unmarshal(so.Bytes(), &out); err != nil {
		t.Fatalf("probe %s: exit %d, %v: stdout %q stderr %q", target, code, err, so.String(), se.String())
	}
	return out, so.String()
}

// The probe reads nginx for what it is: shaping (no nodelay) is
// leaky_shaping; policing (nodelay) is a token bucket of capacity burst+1,
// and the evidence says which nginx configuration behaves the same.
func TestProbeNginx(t *testing.T) {
	needNginx(t)
	// Two live probes that mostly wait on their own nginx: side by side,
	// and beside the other parallel tests (so no chdir: absolute paths).
	t.Parallel()
	conf, err := filepath.Abs(filepath.Join("..", "testdata", "nginx"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("burst.conf", func(t *testing.T) {
		t.Parallel()
		out, raw := probeJSON(t, "nginx:"+filepath.Join(conf, "burst.conf"))
		inf := out.Inference
		if inf.Family != "leaky_shaping" {
			t.Fatalf("family %q, want leaky_shaping: %s", inf.Family, raw)
		}
		checkNginxParams(t, inf, 5, raw)
		if ev := strings.Join(inf.Evidence, "\n"); !nginxShapingRE.MatchString(ev) {
			t.Errorf("evidence does not state the nginx equivalent:\n%s", ev)
		}
	})
	t.Run("burst-nodelay.conf", func(t *testing.T) {
		t.Parallel()
		out, raw := probeJSON(t, "nginx:"+filepath.Join(conf, "burst-nodelay.conf"))
		inf := out.Inference
		if inf.Family != "token_bucket" {
			t.Fatalf("family %q, want token_bucket: %s", inf.Family, raw)
		}
		checkNginxParams(t, inf, 6, raw)
		if ev := strings.Join(inf.Evidence, "\n"); !nginxPolicingRE.MatchString(ev) {
			t.Errorf("evidence does not state nginx's equivalence:\n%s", ev)
		}
	})
}

// The evidence names the nginx configuration that behaves the same; the rate
// in it is the estimate (e.g. 10.012r/s), the burst is exact.
var (
	nginxShapingRE  = regexp.MustCompile(`nginx limit_req rate=(9\.|10)[0-9.]*r/s burst=5 without nodelay`)
	nginxPolicingRE = regexp.MustCompile(`nginx limit_req rate=(9\.|10)[0-9.]*r/s burst=5 nodelay behaves the same`)
)

// checkNginxParams: rate 10/s (nginx stores 10000 thousandths exactly) within
// the probe's stated error plus 5 %, and the burst exactly.
func checkNginxParams(t *testing.T, inf probe.Inference, burst int, raw string) {
	t.Helper()
	if d := inf.RatePerS - 10; d > inf.RateErr+0.5 || d < -(inf.RateErr+0.5) {
		t.Errorf("rate %v ± %v/s, want 10/s: %s", inf.RatePerS, inf.RateErr, raw)
	}
	if inf.Burst != burst {
		t.Errorf("burst %d ± %d, want %d: %s", inf.Burst, inf.BurstErr, burst, raw)
	}
}
