package cmd

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe"
)

// The bad-input sweep of issue #30, through the real binary and the
// matrix's harness (badinput_test.go): an output written over its own
// input, values refused only after sending, budgets ignored, commands that
// disagree on the same data, missing hints. Every case asserts the exit
// code, stderr's first line, and that its input files are unchanged.

// Results streams the cases read: an attack whose every request failed,
// concluded (its end record says "not tested").
const untestedAttackStream = `{"type":"header","schema":1,"tool":"ratecheck","command":"attack","target":"t","url":"http://127.0.0.1:1/","profile":"burst","start":"2026-01-01T00:00:00Z"}
{"type":"result","seq":1,"phase":"burst","scheduled_ns":1000000,"sent_ns":1000000,"done_ns":2000000,"error":"connection refused to 127.0.0.1:1"}
{"type":"end","requests":1,"elapsed_ns":3000000,"outcome":{"profile":"burst","verdict":"not tested: every request failed: connection refused to 127.0.0.1:1"}}
`

const checkConfig = "endpoints:\n  - target: builtin:none\n    expect: {family: none}\n"

func badInputCasesMore() []badInputCase {
	quick := []string{"--max-requests", "303", "--max-time", "5s", "--timeout", "300ms"}
	with := func(command string, more ...string) []string {
		return append(append([]string{command}, quick...), more...)
	}
	clash := func(flag, other, path string) []string {
		return []string{flag + " ", "is the same file as " + other, path, "give " + flag + " another path"}
	}
	usage := func(name string, args []string, files map[string]string, msg ...string) badInputCase {
		return badInputCase{name: name, args: args, files: files, code: ExitUsage, msg: msg, first: msg}
	}
	attackStreamIn := map[string]string{"a.jsonl": attackStream}
	return []badInputCase{
		// ---- A: an output written over an input, the stream or another output
		usage("report-html-over-its-stream", []string{"report", "{dir}/a.jsonl", "--html", "{dir}/a.jsonl"}, attackStreamIn,
			clash("--html", "the RESULTS argument", "a.jsonl")...),
		usage("report-json-over-its-stream-spelt-otherwise", []string{"report", "a.jsonl", "--json", "./a.jsonl"}, attackStreamIn,
			clash("--json", "the RESULTS argument", "a.jsonl")...),
		// /proc/self/cwd is a symlink to the command's directory.
		usage("report-junit-over-its-stream-through-a-symlink", []string{"report", "a.jsonl", "--junit", "/proc/self/cwd/a.jsonl"}, attackStreamIn,
			clash("--junit", "the RESULTS argument", "/proc/self/cwd/a.jsonl")...),
		usage("report-two-outputs-one-file", []string{"report", "a.jsonl", "--html", "r.out", "--json", "r.out"}, attackStreamIn,
			clash("--json", "--html", "r.out")...),
		usage("attack-html-over-out", []string{"attack", "--profile", "burst", "--out", "{dir}/x.jsonl", "--html", "{dir}/x.jsonl", "builtin:none"}, nil,
			clash("--html", "--out", "x.jsonl")...),
		usage("probe-json-over-out", []string{"probe", "--out", "p.jsonl", "--json", "{dir}/p.jsonl", tb5}, nil,
			clash("--json", "--out", "p.jsonl")...),
		usage("check-out-over-config", []string{"check", "--config", "{dir}/c.yaml", "--out", "{dir}/c.yaml"}, map[string]string{"c.yaml": checkConfig},
			clash("--out", "--config", "c.yaml")...),
		usage("check-html-over-config", []string{"check", "--config", "c.yaml", "--html", "{dir}/c.yaml"}, map[string]string{"c.yaml": checkConfig},
			clash("--html", "--config", "c.yaml")...),
		usage("attack-out-exists", []string{"attack", "--profile", "burst", "--out", "{dir}/a.jsonl", "builtin:none"}, attackStreamIn,
			"a.jsonl exists", "earlier run's results", "remove it or choose another path"),
		usage("probe-out-exists", []string{"probe", "--out", "a.jsonl", tb5}, attackStreamIn, "--out a.jsonl exists"),
		usage("compare-out-prefix-names-an-existing-stream", []string{"compare", "--out", "{dir}/c", "builtin:none", "builtin:none"},
			map[string]string{"c-2.jsonl": attackStream}, "--out ", "/c names ", "/c-2.jsonl, which exists"),

		// ---- B: refused before sending what used to be refused after
		usage("attack-source-addr-not-local", []string{"attack", "--profile", "burst", "--source-addrs", "127.0.0.2,192.0.2.7", "--out", "{dir}/r.jsonl", "builtin:none"}, nil,
			"--source-addrs: 192.0.2.7 is not an address of this machine", "127.0.0.0/8"),
		usage("probe-source-addr-not-local", with("probe", "--source-addrs", "192.0.2.7", "--out", "{dir}/r.jsonl", tb5), nil,
			"--source-addrs: 192.0.2.7 is not an address of this machine"),
		usage("probe-http2-to-http-url", with("probe", "--http2", "--out", "{dir}/r.jsonl", "{404}"), nil,
			"--http2 needs an https target", "plain http", "drop --http2"),
		usage("attack-http2-to-builtin", []string{"attack", "--profile", "burst", "--http2", "--out", "{dir}/r.jsonl", "builtin:none"}, nil,
			"--http2 needs an https target", "builtin:none is served over plain http"),
		usage("compare-http2-to-http-targets", []string{"compare", "--http2", "--out", "{dir}/c", "{404}", "builtin:none"}, nil,
			"--http2 needs an https target"),

		// ---- D: the same verdict whichever command gives it
		{name: "report-of-a-cut-stream", files: map[string]string{"p.jsonl": cutProbeStream}, args: []string{"report", "{dir}/p.jsonl"},
			code: ExitUntested, msg: []string{"p.jsonl: the run was cut short (interrupted)"}, first: []string{"ratecheck: ", "p.jsonl", "cut short"},
			stdout: []string{"INTERRUPTED"}, noFamily: true},
		{name: "report-of-an-untested-attack", files: map[string]string{"u.jsonl": untestedAttackStream}, args: []string{"report", "u.jsonl"},
			code: ExitUntested, msg: []string{"u.jsonl: not tested"}, first: []string{"ratecheck: u.jsonl: not tested"}},
		{name: "probe-of-a-404-server", args: with("probe", "--out", "{dir}/r.jsonl", "{404}"), code: ExitUntested,
			msg: []string{"inconclusive", "status 404"}, first: []string{"results: ", "r.jsonl"}, results: "r.jsonl", noFamily: true,
			then: &badInputCase{name: "report-of-the-inconclusive-stream", args: []string{"report", "{dir}/r.jsonl"}, code: ExitUntested,
				msg: []string{"r.jsonl: inconclusive", "status 404"}, first: []string{"ratecheck: ", "r.jsonl: inconclusive"}, noFamily: true}},
		{name: "probe-json-unreachable", args: with("probe", "-o", "json", "--json", "{dir}/p.json", "--out", "{dir}/r.jsonl", "http://127.0.0.1:1/"),
			code: ExitUntested, msg: []string{"target unreachable", "connection refused"}, first: []string{"results: ", "r.jsonl"},
			stdout: []string{`"family": "inconclusive"`, `"reason": "target unreachable`}, results: "r.jsonl", check: sameJSON("p.json")},
		{name: "demo-json-sigint", args: []string{"demo", "-o", "json", "--json", "{dir}/d.json"}, interruptWhen: afterWhile(time.Second),
			code: ExitUntested, msg: []string{"demo interrupted while probing builtin:none"}, first: []string{"demo interrupted"},
			stdout: []string{`"target": "builtin:none"`, `"interrupted": true`}, check: sameJSON("d.json")},
		{name: "demo-text-sigint-writes-json", args: []string{"demo", "--json", "{dir}/d.json"}, interruptWhen: afterStderr("probing builtin:none"),
			code: ExitUntested, msg: []string{"interrupted"}, first: []string{"probing builtin:none"},
			stdout: []string{"INTERRUPTED"}, noStdout: []string{"✓"}, check: fileHolds("d.json", `"interrupted": true`)},
		// The --html directory removed mid-run (TMPDIR: the harness makes it
		// before the command starts): the verdict, then the other file, then
		// a message that claims nothing about sending and says how to render
		// the file again.
		{name: "probe-html-directory-vanishes", args: with("probe", "--out", "{dir}/r.jsonl", "--html", "{dir}/tmp/p.html", "--junit", "{dir}/j.xml", tb5),
			meanwhile: removeOnceResults("r.jsonl", "tmp"), code: ExitUsage, sent: true,
			msg:   []string{"--html ", "/tmp/p.html could not be written", "/r.jsonl: render the file again with 'ratecheck report ", "/r.jsonl --html ", "/tmp/p.html'"},
			first: []string{"results: ", "r.jsonl"}, stdout: []string{"grade:"}, results: "r.jsonl",
			check: all(fileHolds("j.xml", "<testsuite"), stderrLacks("before anything is sent"))},

		// ---- C: one time budget per command
		// It used to run the whole --max-time (10 s here), ignoring 3 s.
		func() badInputCase {
			c := usage("probe-max-duration", append(with("probe", "--max-duration", "3s", tb5), "--max-time", "10s"), nil,
				"--max-duration does not apply to probe", "--max-time 3s")
			c.maxElapsed = 3 * time.Second
			return c
		}(),
		usage("check-max-duration", []string{"check", "-e", "family=none", "--max-duration", "3s", tb5}, nil,
			"--max-duration does not apply to check", "--max-time"),
		usage("compare-probe-max-duration", []string{"compare", "--probe", "--max-duration", "3s", tb5, "builtin:none"}, nil,
			"--max-duration does not apply to compare --probe", "--max-time"),
		usage("compare-profile-max-time", []string{"compare", "--max-time", "3s", tb5, "builtin:none"}, nil,
			"--max-time does not apply to compare without --probe", "--max-duration 3s"),

		// ---- a target that dies mid-probe is never a clean answer (the
		// simulated server refuses from 3 s on; a real one killed mid-probe
		// is probe's TestProbeOfATargetThatDiesStopsAndNamesNothing)
		{name: "probe-of-a-server-that-dies", args: []string{"probe", "--out", "{dir}/r.jsonl", "sim:token_bucket?rate=10/s&burst=20&fail=refuse&fail-at=3s"},
			code: ExitUntested, msg: []string{"the target stopped answering 3.00 s into the probe", "connection refused"}, first: []string{"results: ", "r.jsonl"},
			results: "r.jsonl", stdout: []string{"failed", "inconclusive"}, noStdout: []string{"grade:"}, noFamily: true},

		// ---- a family needs the phase that tells it: a 6 s probe of a
		// one-minute window sees the burst and no recovery. What the plan
		// and the inference make of a 6 s run is logic, not sockets: the
		// window is simulated (the run takes the fits' CPU, not 6 s).
		{name: "check-family-of-a-window-longer-than-the-run", args: []string{"check", "--max-time", "6s", "-e", "family=fixed_window", "-e", "window=60s",
			"--out", "{dir}/r.jsonl", simOf("builtin:fixed_window?limit=30&window=60s")},
			code: ExitUntested, msg: []string{"could not test 2 of 2", "capacity never came back"}, first: []string{"results: ", "r.jsonl"}, results: "r.jsonl",
			noStdout: []string{"✓ pass"}},

		// ---- the data refutes what it can even when cut short: a
		// rejection fails family=none (exit 1), the rest stays untested
		{name: "check-family-none-interrupted-after-rejections", args: []string{"check", "-e", "family=none", "-e", "window=2s", "--out", "{dir}/r.jsonl", tb5},
			interruptWhen: afterResults("r.jsonl", 30, `"status":429`), code: ExitFailed,
			msg: []string{"check failed: 1 of 2 expectations do not hold", "family"}, first: []string{"results: ", "r.jsonl"}, results: "r.jsonl"},

		// ---- E: hints and help
		{name: "attack-http-url-to-a-tls-port", args: []string{"attack", "--profile", "burst", "--burst", "3", "--idle", "0s", "--out", "{dir}/r.jsonl", "http://{tls}/"},
			code: ExitUntested, msg: []string{"{tls} speaks TLS: use an https:// URL (https://{tls}/)"}, first: []string{"results: ", "r.jsonl"},
			stdout: []string{"speaks TLS"}, results: "r.jsonl"},
		{name: "probe-http-url-to-a-tls-port", args: with("probe", "--out", "{dir}/r.jsonl", "http://{tls}/"),
			code: ExitUntested, msg: []string{"{tls} speaks TLS: use an https:// URL"}, first: []string{"results: ", "r.jsonl"}, results: "r.jsonl", noFamily: true},
		usage("help-unknown-topic", []string{"help", "bogus"}, nil, `unknown help topic "bogus"`, "ratecheck help"),
		usage("help-mistyped-topic", []string{"help", "attak"}, nil, `unknown help topic "attak"`, "did you mean attack?"),
		{name: "completion-help-has-examples", args: []string{"completion", "--help"}, code: ExitOK,
			msg: []string{"ratecheck completion bash >"}, first: []string{}, stdout: []string{"Examples:"}, check: stderrLacks("")},
	}
}

func TestBadInputMatrixMore(t *testing.T) {
	if testing.Short() {
		t.Skip("the bad-input matrix runs the real binary")
	}
	// {tls}: an HTTPS server, for the hint that an http:// URL names a
	// TLS port.
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // its complaints about plain requests
	// Closed after the cases, which run in parallel.
	t.Cleanup(tlsSrv.Close)
	tlsAddr := strings.TrimPrefix(tlsSrv.URL, "https://")
	cases := badInputCasesMore()
	for i := range cases {
		for c := &cases[i]; c != nil; c = c.then {
			if c.first == nil {
				t.Fatalf("case %s does not say what stderr's first line holds", c.name)
			}
			replaceTLS(c, tlsAddr)
		}
	}
	runBadInputMatrix(t, cases)
}

// replaceTLS puts addr for {tls} in the case's arguments and expectations.
func replaceTLS(c *badInputCase, addr string) {
	for _, list := range [][]string{c.args, c.msg, c.first, c.stdout} {
		for i := range list {
			list[i] = strings.ReplaceAll(list[i], "{tls}", addr)
		}
	}
}

// hashInputs hashes the case's input files (written into dir) before the
// run, for assertInputsUnchanged.
func hashInputs(t *testing.T, dir string, files map[string]string) map[string][sha256.Size]byte {
	t.Helper()
	out := map[string][sha256.Size]byte{}
	for name := range files {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = sha256.Sum256(b)
	}
	return out
}

// assertInputsUnchanged fails the case when an input file was changed or
// removed by the command: no output may be written over an input.
func assertInputsUnchanged(t *testing.T, dir string, before map[string][sha256.Size]byte) {
	t.Helper()
	for name, sum := range before {
		b, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case err != nil:
			t.Errorf("input %s: %v", name, err)
		case sha256.Sum256(b) != sum:
			t.Errorf("input %s was changed by the command (now %d bytes: %.80q…)", name, len(b), b)
		}
	}
}

// afterWhile holds once d has passed since it was first asked.
func afterWhile(d time.Duration) func(*runningCase) bool {
	var once sync.Once
	var start time.Time
	return func(*runningCase) bool {
		once.Do(func() { start = time.Now() })
		return time.Since(start) >= d
	}
}

// removeOnceResults removes the case directory's subdirectory sub as soon
// as the results stream name holds a result.
func removeOnceResults(name, sub string) func(*runningCase, <-chan struct{}) {
	return func(r *runningCase, ended <-chan struct{}) {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ended:
				return
			case <-tick.C:
				if r.resultLines(name) > 0 {
					os.RemoveAll(filepath.Join(r.dir, sub))
					return
				}
			}
		}
	}
}

// sameJSON checks that the file name in the case directory holds the JSON
// document the command printed on stdout.
func sameJSON(name string) func(*testing.T, *runningCase) {
	return func(t *testing.T, r *runningCase) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(r.dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		var printed, written any
		if err := json.Unmarshal([]byte(r.stdout.String()), &printed); err != nil {
			t.Errorf("stdout is no JSON document: %v\n%s", err, r.stdout.String())
		}
		if err := json.Unmarshal(b, &written); err != nil || !jsonEqual(printed, written) {
			t.Errorf("%s (%v) is not the document printed on stdout:\n%s", name, err, b)
		}
	}
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func fileHolds(name, want string) func(*testing.T, *runningCase) {
	return func(t *testing.T, r *runningCase) {
		t.Helper()
		if b, err := os.ReadFile(filepath.Join(r.dir, name)); err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s (%v) lacks %q", name, err, want)
		}
	}
}

// stderrLacks fails when stderr holds s; "" asserts stderr is empty.
func stderrLacks(s string) func(*testing.T, *runningCase) {
	return func(t *testing.T, r *runningCase) {
		t.Helper()
		if e := r.stderr.String(); (s == "" && e != "") || (s != "" && strings.Contains(e, s)) {
			t.Errorf("stderr holds %q:\n%s", s, e)
		}
	}
}

func all(checks ...func(*testing.T, *runningCase)) func(*testing.T, *runningCase) {
	return func(t *testing.T, r *runningCase) {
		t.Helper()
		for _, c := range checks {
			c(t, r)
		}
	}
}

// The README's grading section states the rubric the code applies: the
// number of checks, the rubric version, and each check's ID and weight in
// its table, in report order.
func TestReadmeStatesTheRubric(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	ids := grade.CheckIDs()
	m := regexp.MustCompile(`(\w+) checks, each with a stable ID`).FindStringSubmatch(readme)
	if m == nil || numberWords[m[1]] != len(ids) {
		t.Errorf("README states %q checks; the rubric has %d", m, len(ids))
	}
	for _, v := range regexp.MustCompile(`rubric \(version (\d+)|rubric v(\d+)|"rubric_version":"(\d+)"`).FindAllStringSubmatch(readme, -1) {
		if got := v[1] + v[2] + v[3]; got != grade.RubricVersion {
			t.Errorf("README says %q; the rubric is version %s", v[0], grade.RubricVersion)
		}
	}
	weights := rubricWeights(t)
	rows := regexp.MustCompile("(?m)^\\| `([a-z0-9.-]+)` \\| (\\d+) \\|").FindAllStringSubmatch(readme, -1)
	var got []string
	for _, r := range rows {
		got = append(got, r[1])
		if w, _ := strconv.Atoi(r[2]); w != weights[r[1]] {
			t.Errorf("README weighs %s %d; the rubric %d", r[1], w, weights[r[1]])
		}
	}
	if strings.Join(got, " ") != strings.Join(ids, " ") {
		t.Errorf("README's rubric table lists\n%v\nthe rubric\n%v", got, ids)
	}
}

var numberWords = map[string]int{"twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
	"seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20}

// rubricWeights are the weights Grade reports for each check (an empty
// observation has every check, each skipped).
func rubricWeights(t *testing.T) map[string]int {
	rep := grade.Grade(&probe.Observation{}, probe.Inference{Family: probe.Inconclusive})
	out := map[string]int{}
	for _, c := range rep.Checks {
		out[c.ID] = c.Weight
	}
	if len(out) != len(grade.CheckIDs()) {
		t.Fatalf("Grade of an empty observation lists %d checks, the rubric %d", len(out), len(grade.CheckIDs()))
	}
	return out
}
