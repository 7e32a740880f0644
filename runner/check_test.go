package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/probe/expect"
)

// The README's --config example and CI workflow stay valid.
func TestReadmeCheckExamples(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	blocks := map[string]string{}
	for _, part := range strings.Split(readme, "```yaml\n")[1:] {
		body, _, _ := strings.Cut(part, "```")
		switch {
		case strings.Contains(body, "endpoints:"):
			blocks["config"] = body
		case strings.Contains(body, "jobs:"):
			blocks["ci"] = body
		}
	}
	if blocks["config"] == "" || blocks["ci"] == "" {
		t.Fatalf("README lacks the --config example or the CI workflow")
	}
	s := ProbeSpec{RequestSpec: attack.RequestSpec{Method: "GET", Timeout: 10 * time.Second, MaxRequests: 2000, MaxDuration: 2 * time.Minute}, MaxTime: time.Minute}
	path := filepath.Join(t.TempDir(), "ratecheck.yaml")
	if err := os.WriteFile(path, []byte(blocks["config"]), 0o644); err != nil {
		t.Fatal(err)
	}
	eps, err := Endpoints(path, s, "")
	if err != nil {
		t.Fatalf("README config: %v", err)
	}
	if len(eps) != 2 {
		t.Fatalf("README config read as %+v", eps)
	}
	req0, err0 := eps[0].Probing.Request("http://127.0.0.1/")
	req1, err1 := eps[1].Probing.Request("http://127.0.0.1/")
	if err0 != nil || err1 != nil || len(eps[0].Expect) != 6 || eps[0].Probing.Options.MaxTime != 30*time.Second || req0.Method != "POST" ||
		len(eps[1].Expect) != 4 || req1.KeyHeader != "X-Api-Key" {
		t.Errorf("README config read as %+v", eps)
	}
	var wf map[string]any
	if err := yaml.Unmarshal([]byte(blocks["ci"]), &wf); err != nil || wf["jobs"] == nil {
		t.Errorf("README workflow: %v", err)
	}
	if !strings.Contains(blocks["ci"], "ratecheck check") || !strings.Contains(blocks["ci"], "--html") || !strings.Contains(blocks["ci"], "--junit") {
		t.Error("the CI workflow should run check and keep the HTML and JUnit reports")
	}
}

// An endpoint's settings replace the command line's, its headers add to
// them; a setting it leaves out keeps the command line's.
func TestProbeSpecUnder(t *testing.T) {
	s := ProbeSpec{RequestSpec: attack.RequestSpec{Method: "GET", Headers: []string{"A: 1"}, Timeout: time.Second, MaxRequests: 100}, MaxTime: time.Minute}
	u := s.Under(expect.Endpoint{Method: "POST", Headers: []string{"B: 2"}, MaxTime: 30 * time.Second})
	if u.Method != "POST" || strings.Join(u.Headers, ",") != "A: 1,B: 2" || u.Timeout != time.Second || u.MaxRequests != 100 || u.MaxTime != 30*time.Second {
		t.Errorf("%+v", u)
	}
	if len(s.Headers) != 1 || s.Method != "GET" {
		t.Errorf("the command line's spec changed: %+v", s)
	}
}

// An endpoint that cannot be probed under the command line's settings is
// refused at its line, naming the flag as Names says; a probe's time
// budget is named as the probe's.
func TestEndpointsRefuseABadEndpointAtItsLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("endpoints:\n  - target: builtin:none\n    key_header: X-Key\n    expect: {family: none}\n  - target: builtin:none\n    expect: {family: none}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := ProbeSpec{RequestSpec: attack.RequestSpec{Timeout: time.Second, MaxRequests: 100, MaxDuration: time.Minute, Keys: 2, Names: names}}
	if _, err := Endpoints(path, s, ""); !Refused(err) || err.Error() != path+":5: --keys needs --key-header NAME to say where the key goes" {
		t.Errorf("%v", err)
	}
	if _, err := Endpoints(filepath.Join(t.TempDir(), "none.yaml"), s, ""); !Refused(err) || !strings.HasPrefix(err.Error(), "--config: ") {
		t.Errorf("a missing file: %v", err)
	}
	if n := s.Probing().Options.Engine.Names("Options.MaxDuration"); n != "--max-time" {
		t.Errorf("the probe's time budget is named %q", n)
	}
}
