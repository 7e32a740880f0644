package cmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/internal/testenv"
	"github.com/ratecheck/ratecheck/results"
)

// The bad-input matrix (issue #12): every way a user can hand ratecheck
// something wrong — flags, targets, builtin: keys, nginx configs, --config
// YAML, results files, servers that do not speak HTTP, and SIGINT in the
// middle of each traffic command — run through the real binary, as a user
// would. Every case asserts the exit code, the one line that says what was
// wrong and how to fix it, that nothing panicked, and that nothing is left
// running: no process of the case's process group, no nginx under the
// case's TMPDIR, no port still listening that a builtin:, nginx: or serve
// target of the case opened.

// badInputTimeout bounds every case; a case that needs it has hung.
const badInputTimeout = 20 * time.Second

// The binary under test, built once for the package's test run (on first
// use, so the other tests of the package do not pay for the build) and
// removed by TestMain. Every test that runs the real binary (the matrices,
// the sharded runs) uses this one. It is built with the test binary's own
// build settings, so it reuses the packages go test has just compiled: with
// CGO_ENABLED=0 instead, net and everything above it is compiled again (40
// s on a 2-core machine with a cold build cache).
var badInputBin struct {
	once      sync.Once
	dir, path string
	err       error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if badInputBin.dir != "" {
		os.RemoveAll(badInputBin.dir)
	}
	os.Exit(code)
}

func ratecheckBinary(t *testing.T) string {
	t.Helper()
	b := &badInputBin
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "ratecheck-bin-"); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "ratecheck")
		out, err := exec.Command("go", "build", "-o", b.path, "github.com/ratecheck/ratecheck").CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// badInputCase is one row of the matrix. Words in braces in args and files
// are replaced before the run: {dir} the case's own directory (also its
// working directory), {nginx} the repository's testdata/nginx, {hang},
// {reset}, {garbage}, {404}, {301}, {500} the misbehaving servers' URLs,
// {busy} the address of a port held open.
type badInputCase struct {
	name  string
	args  []string
	files map[string]string // written into {dir} before the run
	nginx bool              // needs nginx (skipped without it, except in CI)

	code int
	// msg: one line of the output holds all of these — stderr's
	// "ratecheck: " line, or a line of stdout for a command that succeeds.
	msg      []string
	stdout   []string // stdout holds each of these too
	noStdout []string // and none of these
	noFamily bool     // stdout names no limiter family
	// results: a results stream in {dir} that must exist and hold at least
	// one result.
	results string
	// maxElapsed, when set, bounds the command's wall time: a budget or a
	// timeout that must be kept.
	maxElapsed time.Duration

	// interruptWhen, when set, is polled while the command runs; SIGINT is
	// sent as soon as it holds. The command must not have ended before.
	interruptWhen func(r *runningCase) bool
	// first: stderr's first line holds each of these.
	first []string
	// sent: exit 2 came after traffic was sent (a report file that could
	// not be written once the run was over), so the output is not one line.
	sent bool
	// meanwhile, when set, runs beside the command until the case is over
	// (ended closed): work done to it mid-run, such as removing a directory.
	meanwhile func(r *runningCase, ended <-chan struct{})
	// check asserts anything more on the finished run.
	check func(t *testing.T, r *runningCase)
	// then runs next, in the same directory (e.g. report of the stream the
	// case left behind), with the same assertions.
	then *badInputCase
}

// runningCase is a command of the matrix, running or finished.
type runningCase struct {
	dir            string
	stdout, stderr lockedBuffer
}

// lockedBuffer is written by os/exec's copying goroutine while a condition
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// resultLines counts the complete result records in the results stream
// name in the case directory whose line also holds each of also.
func (r *runningCase) resultLines(name string, also ...string) int {
	b, _ := os.ReadFile(filepath.Join(r.dir, name))
	n := 0
	for line := range strings.Lines(string(b)) {
		if !strings.HasSuffix(line, "\n") || !strings.Contains(line, `"type":"result"`) {
			continue
		}
		ok := true
		for _, s := range also {
			ok = ok && strings.Contains(line, s)
		}
		if ok {
			n++
		}
	}
	return n
}

// once conditions for interruptWhen.
func afterResults(name string, n int, also ...string) func(*runningCase) bool {
	return func(r *runningCase) bool { return r.resultLines(name, also...) >= n }
}

func afterStdout(s string) func(*runningCase) bool {
	return func(r *runningCase) bool { return strings.Contains(r.stdout.String(), s) }
}

func afterStderr(s string) func(*runningCase) bool {
	return func(r *runningCase) bool { return strings.Contains(r.stderr.String(), s) }
}

// admittedRate reads "admitted rate │ 49.8/s" from an attack's table.
var admittedRate = regexp.MustCompile(`admitted rate\s*│\s*([0-9.]+)/s`)

// wantAdmittedRate checks the steady table's admitted rate against the truth
// (builtin:none admits every request it was sent, at the rate sent): the
// rate must be over the time the run actually took, within 10% (issue #12,
// "Done when").
func wantAdmittedRate(truth float64) func(*testing.T, *runningCase) {
	return func(t *testing.T, r *runningCase) {
		t.Helper()
		m := admittedRate.FindStringSubmatch(r.stdout.String())
		if m == nil {
			t.Errorf("no admitted rate in the table:\n%s", r.stdout.String())
			return
		}
		got, _ := strconv.ParseFloat(m[1], 64)
		if got < 0.9*truth || got > 1.1*truth {
			t.Errorf("admitted rate %.1f/s, want %.0f/s ± 10%% (a rate over the time actually spent)", got, truth)
		}
	}
}

// familyNamed matches a limiter family stated as a finding: the inference
// line ("  token_bucket: rate ...") or a family cell of a table.
var familyNamed = regexp.MustCompile(`(?m)^\s+(none|fixed_window|sliding_log|sliding_counter|token_bucket|leaky_shaping|concurrency):|family\s*│\s*(none|fixed_window|sliding_log|sliding_counter|token_bucket|leaky_shaping|concurrency)\b`)

// crashSigns are what a Go panic or an unhandled runtime error prints.
var crashSigns = regexp.MustCompile(`panic|goroutine \d|\.go:\d+`)

// Results streams the report cases read: a probe's stream cut short in its
// calibration (no end record), and a concluded attack's.
const (
	cutProbeStream = `{"type":"header","schema":1,"tool":"ratecheck","command":"probe","target":"builtin:token_bucket?rate=10/s&burst=5","url":"http://127.0.0.1:9/","profile":"probe","options":{"max_requests":"2000","max_time":"1m0s"},"start":"2026-12-01T08:00:00Z"}
{"type":"result","seq":1,"phase":"calibrate","scheduled_ns":100000,"sent_ns":120000,"first_byte_ns":400000,"done_ns":420000,"status":200}
{"type":"result","seq":2,"phase":"calibrate","scheduled_ns":200100000,"sent_ns":200120000,"first_byte_ns":200400000,"done_ns":200420000,"status":200}
{"type":"result","seq":3,"pha`
	attackStream = `{"type":"header","schema":1,"tool":"ratecheck","command":"attack","target":"t","url":"http://127.0.0.1:9/","profile":"burst","start":"2026-01-01T00:00:00Z"}
{"type":"result","seq":1,"phase":"burst","scheduled_ns":1000000,"sent_ns":1000000,"first_byte_ns":2000000,"done_ns":2000000,"status":200}
{"type":"end","requests":1,"elapsed_ns":3000000}
`
)

const tb5 = "builtin:token_bucket?rate=10/s&burst=5"

func badInputCases() []badInputCase {
	// Small budgets keep every traffic case short; the probe's own
	// minimums (probe.MinRequests, probe.MinTime) are the floor.
	quickProbe := []string{"--max-requests", "303", "--max-time", "5s", "--timeout", "300ms"}
	with := func(command string, more ...string) []string {
		return append(append([]string{command}, quickProbe...), more...)
	}
	return []badInputCase{
		// ---- the root command, version, completion
		{name: "unknown-command", args: []string{"bogus"}, code: 2, msg: []string{`unknown command "bogus"`, "ratecheck --help"}},
		{name: "mistyped-command", args: []string{"attak"}, code: 2, msg: []string{`unknown command "attak"`, "did you mean attack?"}},
		{name: "version", args: []string{"version"}, code: 0, msg: []string{"ratecheck dev"}},
		{name: "version-extra-argument", args: []string{"version", "extra"}, code: 2, msg: []string{"version takes no arguments", `"extra"`}},
		{name: "completion-bash", args: []string{"completion", "bash"}, code: 0, msg: []string{"bash completion"}},
		{name: "completion-tcsh", args: []string{"completion", "tcsh"}, code: 2, msg: []string{`no completion script for shell "tcsh"`, "bash, fish, powershell, zsh"}},
		{name: "completion-no-shell", args: []string{"completion"}, code: 2, msg: []string{"completion needs a shell", "bash"}},

		// ---- attack: flags
		{name: "attack-no-profile", args: []string{"attack", tb5}, code: 2, msg: []string{"--profile is required", "steady, burst"}},
		{name: "attack-unknown-profile", args: []string{"attack", "--profile", "nope", tb5}, code: 2, msg: []string{`unknown profile "nope"`, "steady, burst"}},
		{name: "attack-no-target", args: []string{"attack", "--profile", "burst"}, code: 2, msg: []string{"attack needs a TARGET"}},
		{name: "attack-unknown-flag", args: []string{"attack", "--profile", "burst", "--bogus", tb5}, code: 2, msg: []string{"unknown flag: --bogus", "ratecheck attack --help"}},
		{name: "attack-bad-rate", args: []string{"attack", "--profile", "steady", "--rate", "fast", tb5}, code: 2, msg: []string{`--rate: rate "fast"`, "10/s"}},
		{name: "attack-zero-timeout", args: []string{"attack", "--profile", "burst", "--timeout", "0s", tb5}, code: 2, msg: []string{"--timeout must be positive"}},
		{name: "attack-keys-without-header", args: []string{"attack", "--profile", "burst", "--keys", "3", tb5}, code: 2, msg: []string{"--keys needs --key-header"}},
		{name: "attack-bad-header", args: []string{"attack", "--profile", "burst", "-H", "NoColon", tb5}, code: 2, msg: []string{`header "NoColon"`, "'Name: value'"}},
		{name: "attack-missing-body-file", args: []string{"attack", "--profile", "burst", "-d", "@{dir}/nope.json", tb5}, code: 2, msg: []string{"body @", "no such file"}},
		{name: "attack-bad-output", args: []string{"attack", "--profile", "burst", "-o", "xml", tb5}, code: 2, msg: []string{`--output "xml"`, "text or json"}},
		{name: "attack-out-unwritable", args: []string{"attack", "--profile", "burst", "--out", "{dir}/no/such/dir/r.jsonl", tb5}, code: 2, msg: []string{"cannot write results", "choose another place with --out"}},
		{name: "attack-html-unwritable", args: []string{"attack", "--profile", "burst", "--html", "{dir}/no/such/dir/r.html", tb5}, code: 2, msg: []string{"--html", "cannot be written"}},
		// attack (issue #12, "What to build" 3): bad combinations are exit 2
		// before anything is sent.
		{name: "attack-burst-over-max-requests", args: []string{"attack", "--profile", "burst", "--burst", "50", "--max-requests", "10", "--idle", "0s", "builtin:none"}, code: 2, msg: []string{"--burst", "--max-requests"}},
		{name: "attack-burst-beyond-ceiling", args: []string{"attack", "--profile", "burst", "--burst", "10000000", "--idle", "0s", "builtin:none"}, code: 2, msg: []string{"--burst"}},

		// ---- attack: targets that cannot be tested (exit 3, the cause in the message)
		{name: "attack-refused", args: []string{"attack", "--profile", "burst", "--burst", "5", "--idle", "0s", "--out", "{dir}/r.jsonl", "http://127.0.0.1:1/"}, code: 3, msg: []string{"connection refused"}, results: "r.jsonl"},
		// The burst waits --timeout for its answers, not --timeout + 10 s:
		// 3 s bounds a 300 ms timeout with a loaded machine's margin.
		{name: "attack-hanging-server", args: []string{"attack", "--profile", "burst", "--burst", "3", "--idle", "0s", "--timeout", "300ms", "--out", "{dir}/r.jsonl", "{hang}"}, code: 3, msg: []string{"timeout"}, results: "r.jsonl", maxElapsed: 3 * time.Second},
		{name: "attack-resetting-server", args: []string{"attack", "--profile", "burst", "--burst", "3", "--idle", "0s", "--out", "{dir}/r.jsonl", "{reset}"}, code: 3, msg: []string{"reset"}, results: "r.jsonl"},
		{name: "attack-garbage-server", args: []string{"attack", "--profile", "burst", "--burst", "3", "--idle", "0s", "--out", "{dir}/r.jsonl", "{garbage}"}, code: 3, msg: []string{"malformed status line"}, results: "r.jsonl"},
		// A server that answers 404 to everything was tested (it answered):
		// exit 0, and the table says what it answered.
		{name: "attack-404-everywhere", args: []string{"attack", "--profile", "burst", "--burst", "5", "--idle", "0s", "--out", "{dir}/r.jsonl", "{404}"}, code: 3, msg: []string{"not tested", "statuses 404 (5)", "is the URL right?"}, stdout: []string{"404 (5)"}, results: "r.jsonl"},
		// Rates over the time actually spent (issue #12, 4).
		{name: "attack-steady-cut-by-max-duration", args: []string{"attack", "--profile", "steady", "--rate", "50/s", "--duration", "10s", "--max-duration", "1s", "--out", "{dir}/r.jsonl", "builtin:none"},
			code: 0, msg: []string{"--max-duration"}, results: "r.jsonl", check: wantAdmittedRate(50)},
		{name: "attack-sigint", args: []string{"attack", "--profile", "steady", "--rate", "50/s", "--duration", "10s", "--out", "{dir}/r.jsonl", "builtin:none"},
			interruptWhen: afterResults("r.jsonl", 50), code: 3, msg: []string{"interrupted"}, results: "r.jsonl", check: wantAdmittedRate(50)},

		// ---- targets: malformed URLs and builtin: specs (through probe)
		{name: "target-not-http", args: []string{"probe", "ftp://127.0.0.1/"}, code: 2, msg: []string{`target "ftp://127.0.0.1/"`, "use an http(s) URL"}},
		{name: "target-url-without-host", args: []string{"probe", "http://"}, code: 2, msg: []string{"is not a valid URL", "http://127.0.0.1:8080/"}},
		{name: "target-url-unclosed-bracket", args: []string{"attack", "--profile", "burst", "http://[::1"}, code: 2, msg: []string{"is not a valid URL"}},
		{name: "target-url-bad-port", args: []string{"attack", "--profile", "burst", "http://127.0.0.1:99999/"}, code: 2, msg: []string{`port "99999"`, "1 to 65535"}},
		{name: "target-url-with-space", args: []string{"probe", "http://127.0.0.1:9/a b?q=x y"}, code: 2, msg: []string{"space", "%20"}},
		{name: "builtin-no-algorithm", args: []string{"probe", "builtin:"}, code: 2, msg: []string{"names no algorithm", "builtin:token_bucket?rate=10/s"}},
		{name: "builtin-unknown-algorithm", args: []string{"attack", "--profile", "burst", "builtin:magic"}, code: 2, msg: []string{`unknown algorithm "magic"`, "token_bucket"}},
		{name: "builtin-duplicate-key", args: []string{"probe", "builtin:token_bucket?rate=10/s&rate=1/s"}, code: 2, msg: []string{`key "rate" is given twice`}},
		{name: "builtin-algo-as-key", args: []string{"probe", "builtin:token_bucket?algo=fixed_window"}, code: 2, msg: []string{"the algorithm is the word after builtin:"}},
		{name: "builtin-unknown-key", args: []string{"probe", "builtin:token_bucket?colour=red"}, code: 2, msg: []string{`unknown key "colour"`, "rate, burst"}},
		{name: "builtin-key-without-value", args: []string{"probe", "builtin:token_bucket?rate"}, code: 2, msg: []string{`"rate" has no value`, "key=value"}},
		{name: "builtin-bad-escape", args: []string{"probe", "builtin:token_bucket?rate=%zz"}, code: 2, msg: []string{"invalid URL escape"}},
		{name: "builtin-bad-rate", args: []string{"probe", "builtin:token_bucket?rate=fast"}, code: 2, msg: []string{`rate "fast"`, "10/s"}},
		{name: "builtin-zero-capacity", args: []string{"probe", "builtin:token_bucket?rate=10/s&burst=0"}, code: 2, msg: []string{"capacity ≥ 1", "burst=20"}},
		{name: "builtin-bad-window", args: []string{"probe", "builtin:fixed_window?limit=5&window=soon"}, code: 2, msg: []string{`window "soon" is not a duration`}},
		{name: "builtin-bad-status", args: []string{"probe", "builtin:token_bucket?status=418"}, code: 2, msg: []string{`status "418"`, "429 or 503"}},
		{name: "builtin-bad-fault", args: []string{"probe", "builtin:token_bucket?fault=nonsense"}, code: 2, msg: []string{`fault "nonsense"`, "lie-remaining"}},
		{name: "builtin-tiers-no-mode", args: []string{"probe", "builtin:tiers?t1=token_bucket:rate=10/s,burst=5&t2=fixed_window:limit=30,window=1m"}, code: 2, msg: []string{"tiers needs mode=all", "mode=either"}},
		{name: "builtin-tiers-missing-tier", args: []string{"probe", "builtin:tiers?mode=all&t1=token_bucket:rate=10/s,burst=5"}, code: 2, msg: []string{"t2 is missing", "t2=token_bucket:rate=10/s,burst=5"}},
		{name: "builtin-tiers-bad-tier", args: []string{"probe", "builtin:tiers?mode=either&t1=concurrency:max-inflight=3&t2=fixed_window:limit=8"}, code: 2, msg: []string{`t1 "concurrency:max-inflight=3"`, "FAMILY one of token_bucket"}},
		{name: "builtin-tiers-variant-in-tier", args: []string{"probe", "builtin:tiers?mode=all&t1=token_bucket:rate=10/s&t2=fixed_window:limit=8,penalty=restart"}, code: 2, msg: []string{`not "penalty"`, "do not apply to a tier"}},
		{name: "builtin-tiers-counting-bucket", args: []string{"probe", "builtin:tiers?mode=all&t1=token_bucket:rate=10/s,count-rejected=on&t2=fixed_window:limit=8"}, code: 2, msg: []string{"count-rejected=on applies to fixed_window, sliding_log and sliding_counter, not token_bucket"}},
		{name: "serve-tiers-on-bucket", args: []string{"serve", "--algo", "token_bucket", "--mode", "all"}, code: 2, msg: []string{"apply to algorithm tiers only"}},

		// ---- probe
		{name: "probe-no-target", args: []string{"probe"}, code: 2, msg: []string{"probe needs a TARGET", "got 0 arguments"}},
		{name: "probe-two-targets", args: []string{"probe", tb5, tb5}, code: 2, msg: []string{"probe needs a TARGET", "got 2 arguments"}},
		{name: "probe-max-requests-below-minimum", args: []string{"probe", "--max-requests", "1", tb5}, code: 2, msg: []string{"--max-requests 1 is too small", "303 requests"}},
		{name: "probe-max-time-below-minimum", args: []string{"probe", "--max-time", "1s", tb5}, code: 2, msg: []string{"--max-time 1s is too small", "5s"}},
		{name: "probe-zero-max-time", args: []string{"probe", "--max-time", "0s", tb5}, code: 2, msg: []string{"--max-time must be positive"}},
		{name: "probe-json-unwritable", args: []string{"probe", "--json", "{dir}/no/such/dir/p.json", tb5}, code: 2, msg: []string{"--json", "cannot be written"}},
		{name: "probe-refused", args: with("probe", "--out", "{dir}/r.jsonl", "http://127.0.0.1:1/"), code: 3, msg: []string{"target unreachable", "connection refused"}, results: "r.jsonl", noFamily: true},
		{name: "probe-hanging-server", args: with("probe", "--out", "{dir}/r.jsonl", "{hang}"), code: 3, msg: []string{"target unreachable", "timeout waiting for"}, results: "r.jsonl", noFamily: true},
		{name: "probe-resetting-server", args: with("probe", "--out", "{dir}/r.jsonl", "{reset}"), code: 3, msg: []string{"target unreachable", "reset"}, results: "r.jsonl", noFamily: true},
		{name: "probe-garbage-server", args: with("probe", "--out", "{dir}/r.jsonl", "{garbage}"), code: 3, msg: []string{"target unreachable", "malformed status line"}, results: "r.jsonl", noFamily: true},
		{name: "probe-404-everywhere", args: with("probe", "--out", "{dir}/r.jsonl", "{404}"), code: 3, msg: []string{"inconclusive", "status 404"}, results: "r.jsonl", noFamily: true},
		// A redirect is not a budget problem: no "budget could not hold" note.
		{name: "probe-redirect", args: with("probe", "--out", "{dir}/r.jsonl", "{301}"), code: 3, msg: []string{"status 301", "point ratecheck at the final URL"}, results: "r.jsonl", noFamily: true,
			noStdout: []string{"budget could not hold"}},
		// --max-time holds against a server that never answers, whatever
		// --timeout (default 10 s) says: 5 s plus 2 s of margin.
		{name: "probe-max-time-against-a-hanging-server", args: []string{"probe", "--max-requests", "303", "--max-time", "5s", "--out", "{dir}/r.jsonl", "{hang}"},
			code: 3, msg: []string{"no answer from", "before the time budget ended"}, results: "r.jsonl", noFamily: true, maxElapsed: 7 * time.Second},
		// SIGINT in the calibration and in the burst: non-zero, no family, and
		// report of the stream with --expect is untested (exit 3).
		{name: "probe-sigint-in-calibration", args: []string{"probe", "--out", "{dir}/r.jsonl", tb5},
			interruptWhen: afterResults("r.jsonl", 1), code: 3, msg: []string{"probe interrupted"}, results: "r.jsonl",
			stdout: []string{"INTERRUPTED"}, noStdout: []string{"✓ pass"}, noFamily: true,
			then: &badInputCase{name: "report-expect-of-the-interrupted-stream", args: []string{"report", "-e", "family=none", "{dir}/r.jsonl"},
				code: 3, msg: []string{"interrupted", "no expectation was tested"}, stdout: []string{"INTERRUPTED"}, noStdout: []string{"PASS"}, noFamily: true}},
		{name: "probe-sigint-in-burst", args: []string{"probe", "--out", "{dir}/r.jsonl", tb5},
			interruptWhen: afterResults("r.jsonl", 1, `"phase":"burst"`), code: 3, msg: []string{"probe interrupted"}, results: "r.jsonl",
			stdout: []string{"INTERRUPTED"}, noStdout: []string{"✓ pass"}, noFamily: true},

		// ---- nginx: configs (every nginx started must be stopped)
		{name: "nginx-bad-parameter", nginx: true, args: []string{"probe", "nginx:{nginx}/bad.conf"}, code: 2, msg: []string{"bad.conf:5", `invalid parameter "nodely"`}},
		{name: "nginx-undefined-zone", nginx: true, args: []string{"attack", "--profile", "burst", "nginx:{nginx}/bad-zone.conf"}, code: 2, msg: []string{"bad-zone.conf:6", `"nosuch"`}},
		{name: "nginx-unparsable", nginx: true, files: map[string]string{"garbage.conf": "limit_req_zone {{{\n"}, args: []string{"probe", "nginx:{dir}/garbage.conf"}, code: 2, msg: []string{"garbage.conf:1"}},
		{name: "nginx-missing-file", args: []string{"check", "-e", "family=none", "nginx:{dir}/nope.conf"}, code: 2, msg: []string{"no such file", "nope.conf"}},
		{name: "nginx-directory", args: []string{"check", "-e", "family=none", "nginx:{dir}"}, code: 2, msg: []string{"is a directory", "name an nginx config file"}},
		{name: "nginx-no-path", args: []string{"probe", "nginx:"}, code: 2, msg: []string{"name the config file", "nginx:limits.conf"}},
		{name: "nginx-bin-missing", args: []string{"probe", "--nginx-bin", "{dir}/no-nginx", "nginx:{nginx}/burst.conf"}, code: 2, msg: []string{"--nginx-bin", "cannot be used"}},
		{name: "nginx-good-then-bad-in-compare", nginx: true, args: []string{"compare", "nginx:{nginx}/burst.conf", "nginx:{nginx}/bad.conf"}, code: 2, msg: []string{"bad.conf:5", "nodely"}},
		{name: "nginx-sigint-in-probe", nginx: true, args: []string{"probe", "--out", "{dir}/r.jsonl", "nginx:{nginx}/burst.conf"},
			interruptWhen: afterResults("r.jsonl", 1, `"phase":"burst"`), code: 3, msg: []string{"probe interrupted"}, results: "r.jsonl",
			stdout: []string{"INTERRUPTED"}, noFamily: true},

		// ---- check
		{name: "check-no-expectation", args: []string{"check", tb5}, code: 2, msg: []string{"needs at least one --expect", "--min-grade"}},
		{name: "check-max-requests-1", args: []string{"check", "--max-requests", "1", "-e", "family=none", tb5}, code: 2, msg: []string{"--max-requests 1 is too small", "303 requests"}},
		{name: "check-max-requests-50", args: []string{"check", "--max-requests", "50", "-e", "family=token_bucket", tb5}, code: 2, msg: []string{"--max-requests 50 is too small"}},
		{name: "check-max-time-1s", args: []string{"check", "--max-time", "1s", "-e", "family=none", tb5}, code: 2, msg: []string{"--max-time 1s is too small", "5s"}},
		{name: "check-unknown-expectation-key", args: []string{"check", "-e", "famly=none", tb5}, code: 2, msg: []string{`unknown expectation key "famly"`, "family, rate"}},
		{name: "check-unknown-family", args: []string{"check", "-e", "family=bogus", tb5}, code: 2, msg: []string{`unknown family "bogus"`, "token_bucket"}},
		{name: "check-bad-rate-expectation", args: []string{"check", "-e", "rate=abc", tb5}, code: 2, msg: []string{`rate "abc"`, "COUNT/UNIT"}},
		{name: "check-bad-min-grade", args: []string{"check", "--min-grade", "Z", tb5}, code: 2, msg: []string{"min-grade", "A+, A, B"}},
		{name: "check-bad-output", args: []string{"check", "-o", "yaml", "-e", "family=none", tb5}, code: 2, msg: []string{`--output "yaml"`}},
		{name: "check-refused", args: with("check", "-e", "family=none", "--out", "{dir}/r.jsonl", "http://127.0.0.1:1/"), code: 3, msg: []string{"could not test", "connection refused"}, results: "r.jsonl", noStdout: []string{"✓ pass"}},
		{name: "check-500-everywhere", args: with("check", "-e", "family=token_bucket", "--out", "{dir}/r.jsonl", "{500}"), code: 3, msg: []string{"could not test", "status 500"}, results: "r.jsonl", noStdout: []string{"✓ pass"}},
		{name: "check-sigint", args: []string{"check", "-e", "family=token_bucket", "--out", "{dir}/r.jsonl", tb5},
			interruptWhen: afterResults("r.jsonl", 1), code: 3, msg: []string{"interrupted", "no expectation was tested"}, results: "r.jsonl",
			stdout: []string{"INTERRUPTED", "untested"}, noStdout: []string{"✓ pass", "PASS:"}, noFamily: true},

		// ---- check --config: bad YAML
		{name: "config-missing-file", args: []string{"check", "--config", "{dir}/nope.yaml"}, code: 2, msg: []string{"--config", "no such file"}},
		{name: "config-and-target", files: map[string]string{"c.yaml": "endpoints:\n  - target: builtin:none\n    expect: {family: none}\n"}, args: []string{"check", "--config", "{dir}/c.yaml", tb5}, code: 2, msg: []string{"not both"}},
		{name: "config-yaml-syntax", files: map[string]string{"c.yaml": "endpoints:\n  - target: [unclosed\n"}, args: []string{"check", "--config", "{dir}/c.yaml"}, code: 2, msg: []string{"c.yaml:"}},
		{name: "config-tab-indent", files: map[string]string{"c.yaml": "endpoints:\n\t- target: builtin:none\n"}, args: []string{"check", "--config", "{dir}/c.yaml"}, code: 2, msg: []string{"c.yaml:2:"}},
		{name: "config-unknown-endpoint-key", files: map[string]string{"c.yaml": "endpoints:\n  - target: builtin:none\n    expekt:\n      family: none\n"}, args: []string{"check", "--config", "{dir}/c.yaml"}, code: 2, msg: []string{"c.yaml:3", `unknown key "expekt"`, "known: name, target"}},
		{name: "config-unknown-top-key", files: map[string]string{"c.yaml": "maxtime: 5s\nendpoints:\n  - target: builtin:none\n    expect: {family: none}\n"}, args: []string{"check", "--config", "{dir}/c.yaml"}, code: 2, msg: []string{"c.yaml:1", `unknown key "maxtime"`, "max_time"}},
		{name: "config-empty", files: map[string]string{"c.yaml": ""}, args: []string{"check", "--config", "{dir}/c.yaml"}, code: 2, msg: []string{"empty config", "endpoints:"}},
		{name: "config-endpoint-without-target", files: map[string]string{"c.yaml": "endpoints:\n  - name: a\n    expect: {family: none}\n"}, args: []string{"check", "--config", "{dir}/c.yaml"}, code: 2, msg: []string{"c.yaml:2", "has no target"}},
		{name: "config-bad-duration", files: map[string]string{"c.yaml": "max_time: soon\nendpoints:\n  - target: builtin:none\n    expect: {family: none}\n"}, args: []string{"check", "--config", "{dir}/c.yaml"}, code: 2, msg: []string{"c.yaml:1", "soon"}},
		{name: "config-bad-builtin", files: map[string]string{"c.yaml": "endpoints:\n  - target: \"builtin:token_bucket?rate=10/s&rate=1/s\"\n    expect: {family: token_bucket}\n"}, args: []string{"check", "--config", "{dir}/c.yaml"}, code: 2, msg: []string{"c.yaml:2", `key "rate" is given twice`}},
		{name: "config-max-requests-below-minimum", files: map[string]string{"c.yaml": "max_requests: 1\nendpoints:\n  - target: \"" + tb5 + "\"\n    expect: {family: none}\n"}, args: []string{"check", "--config", "{dir}/c.yaml"}, code: 2, msg: []string{"c.yaml:3", "too small", "303 requests"}},

		// ---- compare
		{name: "compare-one-target", args: []string{"compare", tb5}, code: 2, msg: []string{"compare needs at least two TARGETs", "got 1"}},
		{name: "compare-unknown-profile", args: []string{"compare", "--profile", "nope", "builtin:none", tb5}, code: 2, msg: []string{`unknown profile "nope"`}},
		{name: "compare-bad-second-target", args: []string{"compare", "builtin:none", "builtin:magic"}, code: 2, msg: []string{`unknown algorithm "magic"`}},
		{name: "compare-probe-budget-below-minimum", args: []string{"compare", "--probe", "--max-requests", "5", "builtin:none", tb5}, code: 2, msg: []string{"--max-requests 5 is too small"}},
		{name: "compare-probe-unreachable", args: with("compare", "--probe", "--between", "0s", "--out", "{dir}/c", "http://127.0.0.1:1/", "{reset}"), code: 3, msg: []string{"2 of 2 targets could not be tested"}, results: "c-1.jsonl", noFamily: true},
		{name: "compare-burst-unreachable", args: []string{"compare", "--between", "0s", "--idle", "0s", "--tail", "0s", "--out", "{dir}/c", "http://127.0.0.1:1/", "{garbage}"}, code: 3, msg: []string{"could not be tested"}, results: "c-1.jsonl"},
		{name: "compare-sigint", args: []string{"compare", "--out", "{dir}/c", tb5, "builtin:none"},
			interruptWhen: afterResults("c-1.jsonl", 1), code: 3, msg: []string{"interrupted"}, results: "c-1.jsonl",
			stdout: []string{"INTERRUPTED"}, noStdout: []string{"grade A"}},
		{name: "compare-probe-sigint", args: []string{"compare", "--probe", "--out", "{dir}/c", tb5, "builtin:none"},
			interruptWhen: afterResults("c-1.jsonl", 1), code: 3, msg: []string{"interrupted"}, results: "c-1.jsonl",
			stdout: []string{"INTERRUPTED"}, noFamily: true},

		// ---- report: bad results files
		{name: "report-no-file", args: []string{"report"}, code: 2, msg: []string{"report needs at least one RESULTS file"}},
		{name: "report-missing-file", args: []string{"report", "{dir}/nope.jsonl"}, code: 2, msg: []string{"no such file", "name a results stream"}},
		{name: "report-directory", args: []string{"report", "{dir}"}, code: 2, msg: []string{"is a directory", "*.jsonl"}},
		{name: "report-garbage", files: map[string]string{"g.jsonl": "hello\n"}, args: []string{"report", "{dir}/g.jsonl"}, code: 2, msg: []string{"g.jsonl: line 1: not a ratecheck results file"}},
		{name: "report-empty", files: map[string]string{"e.jsonl": ""}, args: []string{"report", "{dir}/e.jsonl"}, code: 2, msg: []string{"not a ratecheck results file", "no header"}},
		{name: "report-json-not-a-stream", files: map[string]string{"p.json": "{\"target\": \"x\", \"inference\": {}}\n"}, args: []string{"report", "{dir}/p.json"}, code: 2, msg: []string{"not a ratecheck results file"}},
		{name: "report-newer-schema", files: map[string]string{"n.jsonl": "{\"type\":\"header\",\"schema\":99,\"tool\":\"ratecheck\",\"command\":\"probe\"}\n"}, args: []string{"report", "{dir}/n.jsonl"}, code: 2, msg: []string{"schema 99", "upgrade ratecheck"}},
		{name: "report-bad-result-line", files: map[string]string{"b.jsonl": strings.SplitAfter(cutProbeStream, "\n")[0] + "{\"type\":\"result\",\"seq\":\"one\"}\n"}, args: []string{"report", "{dir}/b.jsonl"}, code: 2, msg: []string{"b.jsonl: line 2: bad result"}},
		{name: "report-expect-on-an-attack", files: map[string]string{"a.jsonl": attackStream}, args: []string{"report", "-e", "family=none", "{dir}/a.jsonl"}, code: 2, msg: []string{"holds an attack", "not a probe"}},
		{name: "report-expect-on-a-cut-stream", files: map[string]string{"p.jsonl": cutProbeStream}, args: []string{"report", "-e", "family=token_bucket", "{dir}/p.jsonl"}, code: 3, msg: []string{"no expectation was tested"},
			stdout: []string{"INTERRUPTED"}, noStdout: []string{"PASS", "FAIL"}, noFamily: true},
		{name: "report-bad-expectation", files: map[string]string{"p.jsonl": cutProbeStream}, args: []string{"report", "-e", "nope=1", "{dir}/p.jsonl"}, code: 2, msg: []string{`unknown expectation key "nope"`}},
		{name: "report-bad-output", files: map[string]string{"p.jsonl": cutProbeStream}, args: []string{"report", "-o", "xml", "{dir}/p.jsonl"}, code: 2, msg: []string{`--output "xml"`}},
		{name: "report-html-into-a-directory", files: map[string]string{"p.jsonl": cutProbeStream}, args: []string{"report", "--html", "{dir}", "{dir}/p.jsonl"}, code: 2, msg: []string{"--html", "is a directory"}},

		// ---- serve
		{name: "serve-unknown-algorithm", args: []string{"serve", "--algo", "magic", "--addr", "127.0.0.1:0"}, code: 2, msg: []string{`unknown algorithm "magic"`}},
		{name: "serve-bad-rate", args: []string{"serve", "--rate", "fast", "--addr", "127.0.0.1:0"}, code: 2, msg: []string{`rate "fast"`}},
		{name: "serve-bad-fault", args: []string{"serve", "--fault", "nope", "--addr", "127.0.0.1:0"}, code: 2, msg: []string{`fault "nope"`}},
		{name: "serve-address-without-port", args: []string{"serve", "--addr", "nonsense"}, code: 2, msg: []string{"cannot listen on nonsense", "missing port"}},
		{name: "serve-port-out-of-range", args: []string{"serve", "--addr", "127.0.0.1:99999"}, code: 2, msg: []string{"cannot listen on 127.0.0.1:99999"}},
		{name: "serve-port-in-use", args: []string{"serve", "--addr", "{busy}"}, code: 2, msg: []string{"cannot listen on", "address already in use"}},
		{name: "serve-extra-argument", args: []string{"serve", "now"}, code: 2, msg: []string{"serve takes no arguments"}},
		{name: "serve-sigint", args: []string{"serve", "--algo", "token_bucket", "--addr", "127.0.0.1:0"},
			interruptWhen: afterStdout("listening on"), code: 0, msg: []string{"ratecheck serve: stopping"}},

		// ---- demo
		{name: "demo-extra-argument", args: []string{"demo", "now"}, code: 2, msg: []string{"demo takes no arguments"}},
		{name: "demo-bad-output", args: []string{"demo", "-o", "xml"}, code: 2, msg: []string{`--output "xml"`}},
		{name: "demo-json-unwritable", args: []string{"demo", "--json", "{dir}/no/such/dir/d.json"}, code: 2, msg: []string{"--json", "cannot be written"}},
		{name: "demo-sigint", args: []string{"demo"}, interruptWhen: afterStderr("probing builtin:none"), code: 3, msg: []string{"interrupted"},
			stdout: []string{"INTERRUPTED"}, noStdout: []string{"✓"}},
	}
}

func TestBadInputMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("the bad-input matrix runs the real binary (about 40 s)")
	}
	cases := badInputCases()
	if len(cases) < 40 {
		t.Fatalf("the matrix has %d cases; issue #12 asks for at least 40", len(cases))
	}
	runBadInputMatrix(t, cases)
}

// runBadInputMatrix runs every case as a subtest of t, each in a directory
// of its own, with the misbehaving servers up.
func runBadInputMatrix(t *testing.T, cases []badInputCase) {
	bin := ratecheckBinary(t)
	nginxDir, err := filepath.Abs(filepath.Join("..", "testdata", "nginx"))
	if err != nil {
		t.Fatal(err)
	}
	srv := startMisbehaving(t)
	repl := []string{"{nginx}", nginxDir, "{hang}", srv.hang, "{reset}", srv.reset, "{garbage}", srv.garbage,
		"{404}", srv.s404, "{301}", srv.s301, "{500}", srv.s500, "{busy}", srv.busy}
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.name] {
			t.Fatalf("two cases named %s", c.name)
		}
		seen[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			// Each case runs in a directory and a process group of its
			// own, and mostly waits on the binary: side by side.
			t.Parallel()
			if c.nginx {
				needNginx(t)
			}
			dir := t.TempDir()
			r := strings.NewReplacer(append(repl, "{dir}", dir)...)
			for cur := &c; cur != nil; cur = cur.then {
				runBadInputCase(t, bin, dir, r, cur)
			}
		})
	}
}

// runBadInputCase runs one case in dir and asserts everything the matrix
// promises about it.
func runBadInputCase(t *testing.T, bin, dir string, r *strings.Replacer, c *badInputCase) {
	t.Helper()
	for name, body := range c.files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(r.Replace(body)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := jsonlFiles(dir)
	inputs := hashInputs(t, dir, c.files)
	tmp := filepath.Join(dir, "tmp") // the command's TMPDIR: nginx's private directories go there
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	args := make([]string, len(c.args))
	for i, a := range c.args {
		args[i] = r.Replace(a)
	}

	ctx, cancel := context.WithTimeout(context.Background(), badInputTimeout)
	defer cancel()
	rc := &runningCase{dir: dir}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.Stdout, cmd.Stderr = &rc.stdout, &rc.stderr
	// Its own process group, so that whatever it starts can be found (and,
	// on a timeout, killed) afterwards.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	started := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	ended := make(chan struct{})
	defer close(ended)
	if c.meanwhile != nil {
		go c.meanwhile(rc, ended)
	}
	// Checked however the case ends (a Fatal included); by then the command
	// has exited, or is killed with its group.
	defer func() { assertNothingLeftBy(t, pgid, dir, tmp, rc.stdout.String()+rc.stderr.String()) }()
	var waitErr error
	if c.interruptWhen != nil {
		// Poll the condition (the results stream growing, a line printed):
		// the signal goes only once the command has demonstrably started.
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
	poll:
		for {
			select {
			case waitErr = <-done:
				t.Fatalf("%s ended before the moment to interrupt it came (exit %v)\nstdout:\n%s\nstderr:\n%s",
					c.name, waitErr, rc.stdout.String(), rc.stderr.String())
			case <-tick.C:
				if c.interruptWhen(rc) {
					if err := cmd.Process.Signal(os.Interrupt); err != nil {
						t.Fatal(err)
					}
					break poll
				}
			}
		}
	}
	waitErr = <-done
	elapsed := time.Since(started)
	stdout, stderr := rc.stdout.String(), rc.stderr.String()
	show := fmt.Sprintf("case %s: ratecheck %s\nstdout:\n%s\nstderr:\n%s", c.name, strings.Join(args, " "), stdout, stderr)

	if ctx.Err() != nil {
		t.Fatalf("still running after %s: killed\n%s", badInputTimeout, show)
	}
	code := cmd.ProcessState.ExitCode()
	var ee *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &ee) {
		t.Fatalf("%v\n%s", waitErr, show)
	}
	if code != c.code {
		t.Errorf("exit %d, want %d\n%s", code, c.code, show)
	}
	if c.maxElapsed > 0 && elapsed > c.maxElapsed {
		t.Errorf("took %s, want at most %s\n%s", elapsed.Round(time.Millisecond), c.maxElapsed, show)
	}
	if m := crashSigns.FindString(stdout + stderr); m != "" {
		t.Errorf("output shows a crash (%q)\n%s", m, show)
	}

	// The one line that says what was wrong.
	where, prefix := stderr, "ratecheck: "
	if c.code == ExitOK {
		where, prefix = stdout, ""
	}
	found := false
	for line := range strings.Lines(where) {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		all := true
		for _, s := range c.msg {
			all = all && strings.Contains(line, s)
		}
		found = found || all
	}
	if !found {
		t.Errorf("no line %q… holding all of %q\n%s", prefix, c.msg, show)
	}
	first, _, _ := strings.Cut(stderr, "\n")
	for _, s := range c.first {
		if !strings.Contains(first, s) {
			t.Errorf("stderr's first line %q lacks %q\n%s", first, s, show)
		}
	}
	assertInputsUnchanged(t, dir, inputs)
	if c.code == ExitUsage && !c.sent {
		// A usage error is said before anything is sent: one line, no
		// results stream.
		if n := strings.Count(strings.TrimRight(stderr, "\n"), "\n"); n != 0 || stdout != "" {
			t.Errorf("a usage error should be one line on stderr and nothing on stdout\n%s", show)
		}
		if made := newFiles(before, jsonlFiles(dir)); len(made) > 0 {
			t.Errorf("a usage error wrote results streams %v: something was sent\n%s", made, show)
		}
	}

	for _, s := range c.stdout {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q\n%s", s, show)
		}
	}
	for _, s := range c.noStdout {
		if strings.Contains(stdout, s) {
			t.Errorf("stdout holds %q\n%s", s, show)
		}
	}
	if c.noFamily {
		if m := familyNamed.FindString(stdout); m != "" {
			t.Errorf("stdout names a family (%q) the run did not earn\n%s", strings.TrimSpace(m), show)
		}
	}
	if c.results != "" {
		rec, err := results.ReadStreamFile(filepath.Join(dir, c.results))
		switch {
		case err != nil:
			t.Errorf("results stream %s: %v\n%s", c.results, err, show)
		case len(rec.Results) == 0:
			t.Errorf("results stream %s holds no result\n%s", c.results, show)
		}
	}
	if c.check != nil {
		c.check(t, rc)
	}
}

// jsonlFiles are the results streams in dir, either format.
func jsonlFiles(dir string) map[string]bool {
	out := map[string]bool{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".jsonl") || strings.HasSuffix(e.Name(), results.CompactExt) {
			out[e.Name()] = true
		}
	}
	return out
}

func newFiles(before, after map[string]bool) []string {
	var out []string
	for f := range after {
		if !before[f] {
			out = append(out, f)
		}
	}
	return out
}

// assertNothingLeftBy checks, after the command has exited, that nothing it
// started survives: no process in its process group, no process (an nginx
// master keeps -p DIR in its title) running from the case's directory, an
// empty TMPDIR (nginx targets' private directories removed), and no port
// still listening that a target ratecheck started for the case opened.
// Whatever is found is killed, so that one failure does not leak into the
// next cases.
func assertNothingLeftBy(t *testing.T, pgid int, dir, tmp, output string) {
	t.Helper()
	if ps := processGroup(pgid); len(ps) > 0 {
		t.Errorf("processes of the command's group still running: %v", ps)
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	if ps := testenv.ProcsMentioning(dir); len(ps) > 0 {
		t.Errorf("processes still running from %s: %v", dir, ps)
		for _, p := range ps {
			if pid, err := strconv.Atoi(strings.SplitN(p, ":", 2)[0]); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		t.Errorf("left behind in TMPDIR: %s", e.Name())
	}
	for _, addr := range startedAddrs(dir, output) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			t.Errorf("%s still accepts connections after the command exited", addr)
		}
	}
}

// processGroup lists the live processes whose process group is pgid.
func processGroup(pgid int) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			out = append(out, e.Name()+" "+s[:strings.LastIndexByte(s, ')')+1])
		}
	}
	return out
}

// listeningOn is serve's announcement of its address.
var listeningOn = regexp.MustCompile(`listening on (http://[^\s/]+/)`)

// startedAddrs are the loopback addresses of the targets ratecheck itself
// started for the case: builtin: and nginx: targets named in the headers of
// the results streams in dir, and the address serve announced.
func startedAddrs(dir, output string) []string {
	var urls []string
	for name := range jsonlFiles(dir) {
		h, err := results.PeekHeader(filepath.Join(dir, name))
		if err == nil && (strings.HasPrefix(h.Target, "builtin:") || strings.HasPrefix(h.Target, "nginx:")) {
			urls = append(urls, h.URL)
		}
	}
	for _, m := range listeningOn.FindAllStringSubmatch(output, -1) {
		urls = append(urls, m[1])
	}
	var addrs []string
	for _, s := range urls {
		if u, err := url.Parse(s); err == nil && u.Port() != "" {
			addrs = append(addrs, u.Host)
		}
	}
	return addrs
}

// misbehaving holds the test's servers on 127.0.0.1 that are no rate
// limiters: one that never answers, one that resets every connection, one
// that answers in something else than HTTP, three with fixed statuses, and
// a port held open so that nothing else can listen on it.
type misbehaving struct {
	hang, reset, garbage string // http:// URLs
	s404, s301, s500     string
	busy                 string // host:port
}

func startMisbehaving(t *testing.T) *misbehaving {
	var m misbehaving
	m.hang = "http://" + serveRaw(t, func(c net.Conn) {
		_, _ = io.Copy(io.Discard, c) // read until the client gives up
	}) + "/"
	m.reset = "http://" + serveRaw(t, func(c net.Conn) {
		readRequestHead(c)
		_ = c.(*net.TCPConn).SetLinger(0) // Close sends RST
	}) + "/"
	m.garbage = "http://" + serveRaw(t, func(c net.Conn) {
		readRequestHead(c)
		_, _ = c.Write([]byte("SSH-2.0-OpenSSH_9.6 not HTTP\r\n\x00\xff\xfe\r\n\r\n"))
	}) + "/"
	status := func(code int) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if code/100 == 3 {
				w.Header().Set("Location", "/elsewhere")
			}
			w.WriteHeader(code)
		}))
		t.Cleanup(s.Close)
		return s.URL + "/"
	}
	m.s404, m.s301, m.s500 = status(404), status(301), status(500)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	m.busy = ln.Addr().String()
	return &m
}

// readRequestHead reads up to the blank line that ends a request's header.
func readRequestHead(c net.Conn) {
	br := bufio.NewReader(c)
	for {
		line, err := br.ReadString('\n')
		if err != nil || line == "\r\n" || line == "\n" {
			return
		}
	}
}

// serveRaw accepts TCP connections on a loopback port and hands each to
// handle (then closes it), until the test ends; it returns the address.
func serveRaw(t *testing.T, handle func(net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns = map[net.Conn]bool{}
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				handle(c)
				c.Close()
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}
