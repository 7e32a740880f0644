package runner

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/probe/expect"
	"github.com/ratecheck/ratecheck/probe/selftest"
	"github.com/ratecheck/ratecheck/report"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/launch"
)

var flags = map[string]string{"Options.MaxRequests": "--max-requests", "Options.MaxDuration": "--max-time", "ProbeSpec.MaxTime": "--max-time", "RunOptions.Out": "--out",
	"RequestSpec.Keys": "--keys", "RequestSpec.KeyHeader": "--key-header"}

func names(field string) string { return flags[field] }

// A budget too small for the smallest plan is refused naming the flag; one
// from a config file names the file, the line and the endpoint.
func TestCheckBudgetNamesTheFlag(t *testing.T) {
	err := CheckBudget(probe.Options{MaxRequests: 5, Engine: attack.Options{Names: names}})
	if !Refused(err) || !strings.HasPrefix(err.Error(), "--max-requests 5 is too small: the smallest probe plan needs at least ") || !strings.HasSuffix(err.Error(), " requests; raise --max-requests") {
		t.Errorf("requests: %v", err)
	}
	err = CheckBudget(probe.Options{MaxTime: 1, Engine: attack.Options{Names: names}})
	if !Refused(err) || !strings.HasPrefix(err.Error(), "--max-time 1ns is too small") {
		t.Errorf("time: %v", err)
	}
	if err := CheckBudget(probe.Options{}); err != nil {
		t.Errorf("the default budget: %v", err)
	}
	c := Check{Config: "c.yaml", Endpoints: []Endpoint{{Spec: "builtin:none"}, {Name: "api", Spec: "builtin:none", Line: 4,
		Probing: Probing{Options: probe.Options{MaxRequests: 5, Engine: attack.Options{Names: names}}}}}}
	if err := c.CheckBudgets(); !Refused(err) || !strings.HasPrefix(err.Error(), "c.yaml:4: endpoint api (builtin:none): --max-requests 5 is too small") {
		t.Errorf("config: %v", err)
	}
}

// A target whose spec is wrong stops the check before anything is sent,
// at its line in the config.
func TestCheckRefusesABadTargetAtItsLine(t *testing.T) {
	c := Check{Config: "c.yaml", Endpoints: []Endpoint{{Spec: "builtin:none"}, {Spec: "nonsense", Line: 7}}, Paths: []string{"a", "b"}, Stderr: io.Discard}
	_, err := c.Run(context.Background())
	if !Refused(err) || !strings.HasPrefix(err.Error(), `c.yaml:7: target "nonsense": target "nonsense": use an http(s) URL`) {
		t.Errorf("%v", err)
	}
}

// A target that does not answer is untested, with its run.
func TestProbeOfATargetThatDoesNotAnswer(t *testing.T) {
	tgt, err := launch.Open(context.Background(), "http://127.0.0.1:1/")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "p.jsonl")
	p := Probing{Request: func(url string) (*attack.Request, error) { return attack.NewRequest("GET", url, nil, "") }, Stderr: io.Discard}
	g, err := Probe(context.Background(), tgt, path, p)
	var ue *UntestedError
	if !errors.As(err, &ue) || !errors.Is(err, probe.ErrUnreachable) || g == nil || g.Grade != nil || g.Res.Inference.Family != probe.Inconclusive {
		t.Errorf("%v, %+v", err, g)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("no stream: %v", err)
	}
	p.Request = func(string) (*attack.Request, error) { return nil, errors.New("bad header") }
	if _, err := Probe(context.Background(), tgt, path, p); !Refused(err) {
		t.Errorf("a bad request: %v", err)
	}
}

// A check fails naming each expectation that does not hold, labelled with
// its run when there are several; one untested is not a pass.
func TestVerdict(t *testing.T) {
	o := func(key, result string) expect.Outcome {
		return expect.Outcome{Key: key, Expectation: key + "=x", Result: result}
	}
	doc := report.NewDocument("v", "check", "probe",
		report.Run{Target: "a", Expectations: []expect.Outcome{o("family", expect.Pass), o("rate", expect.Fail)}},
		report.Run{Target: "b", Name: "bee", Expectations: []expect.Outcome{o("burst", expect.Untested)}})
	var fe *FailedError
	if err := Verdict(doc, true); !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), "check failed: 1 of 3 expectations do not hold: a: ") {
		t.Errorf("failed: %v", err)
	}
	doc.Runs[0].Expectations = doc.Runs[0].Expectations[:1]
	var ue *UntestedError
	if err := Verdict(doc, false); !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "check could not test 1 of 2 expectations: bee: ") {
		t.Errorf("untested: %v", err)
	}
	if err := Verdict(doc, true); !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "interrupted") {
		t.Errorf("interrupted: %v", err)
	}
	doc.Runs, doc.Outcome = doc.Runs[:1], expect.Pass
	if err := Verdict(doc, false); err != nil {
		t.Errorf("passed: %v", err)
	}
}

// A run read back is untested as the command that made it said: cut
// short, inconclusive, or an attack that saw no admission or rejection.
func TestRecordedErr(t *testing.T) {
	runs := []report.Run{
		{ResultsFile: "a", Kind: "attack", Stopped: "interrupted"},
		{ResultsFile: "b", Kind: "probe", Inference: &probe.Inference{Family: probe.Inconclusive, Reason: "why"}},
		{ResultsFile: "c", Kind: "attack"},
		{ResultsFile: "d", Kind: "probe", Inference: &probe.Inference{Family: "none"}},
	}
	var ue *UntestedError
	err := RecordedErr(runs)
	if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "a: the run was cut short") || strings.Count(err.Error(), "; ") != 2 || !strings.Contains(err.Error(), "; c: not tested") {
		t.Errorf("%v", err)
	}
	if err := RecordedErr(runs[3:]); err != nil {
		t.Errorf("a tested run: %v", err)
	}
}

// What is no results stream is refused, saying what to name.
func TestRecordedRefusesWhatIsNoStream(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.jsonl")
	if err := os.WriteFile(junk, []byte("not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		dir:                              "is a directory: name the results streams in it",
		filepath.Join(dir, "none.jsonl"): "(name a results stream: the --out file of attack, probe, check or compare)",
		junk:                             junk + ": ",
	} {
		if _, err := Recorded([]string{path}, nil, "v"); !Refused(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", path, err, want)
		}
	}
}

// A target spec or a server binary that is wrong is refused (a server
// not installed is untested: targetErr, as check and compare open theirs).
func TestOpen(t *testing.T) {
	if _, err := Open(context.Background(), "nonsense", launch.Options{}); !Refused(err) {
		t.Errorf("a bad spec: %v", err)
	}
	if _, err := Open(context.Background(), "nginx:../testdata/nginx/bad.conf", launch.Options{NginxBin: "/nonexistent/nginx"}); !Refused(err) {
		t.Errorf("--nginx-bin that is not there: %v", err)
	}
	tgt, err := Open(context.Background(), "http://127.0.0.1:1/", launch.Options{})
	if err != nil || tgt.URL != "http://127.0.0.1:1/" {
		t.Errorf("a URL: %v", err)
	}
}

// An attack that concluded is untested when it tested nothing or a signal
// cut it short; a budget's stop is an answer.
func TestAttackErr(t *testing.T) {
	why := errors.New("no answer was an admission or a rejection")
	var ue *UntestedError
	if err := AttackErr(&attack.RunResult{Untested: "x"}, why); !errors.As(err, &ue) || !errors.Is(err, why) {
		t.Errorf("untested: %v", err)
	}
	res := &attack.RunResult{Stopped: attack.StopInterrupted, Elapsed: 1500 * time.Millisecond}
	if err := AttackErr(res, nil); !errors.As(err, &ue) || err.Error() != "interrupted after 1.50 s: the figures cover only what was sent before" {
		t.Errorf("interrupted: %v", err)
	}
	if err := AttackErr(&attack.RunResult{Stopped: attack.StopTimeBudget}, nil); err != nil {
		t.Errorf("time budget: %v", err)
	}
}

// An attack's stream names the machine that ran it, so that a merged
// shard is shown with its host.
func TestAttackRecordsItsHost(t *testing.T) {
	tgt, err := launch.Open(context.Background(), "http://127.0.0.1:1/")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "a.jsonl")
	a := Attacking{Profile: attack.Burst{K: 1}, Stderr: io.Discard,
		Request: func(url string) (*attack.Request, error) { return attack.NewRequest("GET", url, nil, "") },
		Run:     attack.RunOptions{Out: path, Header: results.StreamHeader{Command: "attack"}}}
	if _, err := Attack(context.Background(), tgt, a); err == nil {
		t.Error("an attack on a closed port tested something")
	}
	h, err := results.PeekHeader(path)
	if host, _ := os.Hostname(); err != nil || h.Host != host || host == "" {
		t.Errorf("host %q (%v); want %q", h.Host, err, host)
	}
}

// The demo fails when a limiter was named wrong, and shows each outcome
// without its marks.
func TestDemoOutcomes(t *testing.T) {
	outs := []DemoOutcome{{Outcome: selftest.Outcome{Spec: "a", FamilyOK: true, ParamsOK: true}},
		{Outcome: selftest.Outcome{Spec: "b", FamilyOK: true}, Interrupted: true}}
	if plain := Outcomes(outs); len(plain) != 2 || plain[0].Spec != "a" || plain[1].Spec != "b" {
		t.Errorf("%+v", plain)
	}
	var fe *FailedError
	if err := Misidentified(outs); !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), "1 of 2 built-in limiters") {
		t.Errorf("%v", err)
	}
	if err := Misidentified(outs[:1]); err != nil {
		t.Errorf("all named: %v", err)
	}
}
