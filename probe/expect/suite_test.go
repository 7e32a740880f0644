package expect

import (
	"strings"
	"testing"
	"time"
)

func TestParseSuiteDefaultsAndLines(t *testing.T) {
	s, err := ParseSuite("s.yaml", []byte(`max_time: 20s
max_requests: 500
min_grade: B
endpoints:
  - name: a
    target: builtin:none
    expect: {family: none}
  - target: builtin:none
    max_time: 30s
    min_grade: A
    expect: [family=none, status=429]
`))
	if err != nil {
		t.Fatal(err)
	}
	a, b := s.Endpoints[0], s.Endpoints[1]
	if a.Line != 5 || a.MaxTime != 20*time.Second || a.MaxRequests != 500 || a.MinGrade != "B" || len(a.Expectations) != 1 || a.Label() != "a (builtin:none)" {
		t.Errorf("endpoint a = %+v", a)
	}
	if b.Line != 8 || b.MaxTime != 30*time.Second || b.MinGrade != "A" || len(b.Expectations) != 2 {
		t.Errorf("endpoint b = %+v", b)
	}
}

func TestParseSuiteErrorsNameFileLineAndKey(t *testing.T) {
	cases := []struct{ body, want string }{
		{"endpoints:\n  - target: x\n    expct: {}\n", `s.yaml:3: unknown key "expct" in an endpoint (known: name, target, method, headers, body, key_header, timeout, max_time, max_requests, min_grade, expect)`},
		{"endpoint:\n  - target: x\n", `s.yaml:1: unknown key "endpoint" at the top level (known: max_time, max_requests, timeout, min_grade, endpoints)`},
		{"", "s.yaml: empty config"},
		{"max_time: 1s\n", "s.yaml: no endpoints"},
		{"endpoints: x\n", "s.yaml:1: endpoints: is a list"},
		{"endpoints:\n  - x\n", "s.yaml:2: each endpoint is a mapping"},
		{"endpoints:\n  - name: a\n", "s.yaml:2: endpoint 1 has no target"},
		{"endpoints:\n  - target: x\n    expect: {rat: 1/s}\n", `s.yaml:3: unknown expectation key "rat"`},
		{"endpoints:\n  - target: x\n    max_time: forever\n", "s.yaml:3:"},
		{"endpoints:\n  - target: [\n", "s.yaml:"},
		{"endpoints:\n  - target: x\n    max_time: -1s\n", "s.yaml:2: max_time, max_requests and timeout must be positive"},
	}
	for _, c := range cases {
		_, err := ParseSuite("s.yaml", []byte(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.body, err, c.want)
		}
	}
}

// A key given twice in one expect: is refused at the repeat's line, in a
// mapping (yaml keeps the last silently) as in a list, spelling aside.
func TestParseSuiteRefusesAKeyGivenTwice(t *testing.T) {
	cases := []struct{ body, want string }{
		{"endpoints:\n  - target: x\n    expect:\n      family: fixed_window\n      window: 60s\n      limit: 30\n      window: 30s\n",
			"s.yaml:7: expect: key 'window' given twice (first on line 5): keep one"},
		{"endpoints:\n  - target: x\n    expect: [window=60s, limit=30, window=30s]\n",
			"s.yaml:3: expect: key 'window' given twice (first on line 3): keep one"},
		{"endpoints:\n  - target: x\n    expect:\n      retry_after: present\n      retry-after: absent\n",
			"s.yaml:5: expect: key 'retry-after' given twice (first on line 4): keep one"},
	}
	for _, c := range cases {
		_, err := ParseSuite("s.yaml", []byte(c.body))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: error %v, want %q", c.body, err, c.want)
		}
	}
	// The same key in two endpoints is two expectations, not a repeat.
	if _, err := ParseSuite("s.yaml", []byte("endpoints:\n  - target: x\n    expect: {window: 60s}\n  - target: y\n    expect: {window: 30s}\n")); err != nil {
		t.Errorf("one key per endpoint refused: %v", err)
	}
}

// An endpoint's expectations take its min-grade (its own, the file's, or
// the command line's); one with none at all is refused at its line.
func TestSuiteExpectations(t *testing.T) {
	s, err := ParseSuite("s.yaml", []byte("endpoints:\n  - target: builtin:none\n    expect: {family: none}\n  - target: builtin:none\n  - target: builtin:none\n    min_grade: Z\n"))
	if err != nil {
		t.Fatal(err)
	}
	if exps, err := s.Expectations(s.Endpoints[0], ""); err != nil || len(exps) != 1 {
		t.Errorf("own: %v, %v", exps, err)
	}
	if exps, err := s.Expectations(s.Endpoints[0], "B"); err != nil || len(exps) != 2 || exps[1].Key != KeyMinGrade {
		t.Errorf("with the command line's min-grade: %v, %v", exps, err)
	}
	if len(s.Endpoints[0].Expectations) != 1 {
		t.Error("the endpoint's own expectations changed")
	}
	if _, err := s.Expectations(s.Endpoints[1], ""); err == nil || !strings.HasPrefix(err.Error(), "s.yaml:4: endpoint builtin:none has no expectations") {
		t.Errorf("none: %v", err)
	}
	if _, err := s.Expectations(s.Endpoints[2], ""); err == nil || !strings.HasPrefix(err.Error(), "s.yaml:5: min_grade:") {
		t.Errorf("a bad min_grade: %v", err)
	}
}
