package expect

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Suite is a check suite: several endpoints, each with its expectations,
// read from a YAML file (README "ratecheck check").
type Suite struct {
	Path      string
	Endpoints []Endpoint
}

// Endpoint is one target of a suite with its request settings, the file's
// defaults applied. Zero settings are left to the caller's defaults.
type Endpoint struct {
	Name, Target string
	Line         int // of the endpoint in the file
	Method       string
	Headers      []string
	Body         string
	KeyHeader    string
	Timeout      time.Duration
	MaxTime      time.Duration
	MaxRequests  int
	// MinGrade is the endpoint's min_grade, else the file's; "" for none.
	MinGrade     string
	Expectations []Expectation
}

// Label names the endpoint in messages: its name and target.
func (e Endpoint) Label() string {
	if e.Name != "" {
		return e.Name + " (" + e.Target + ")"
	}
	return e.Target
}

// Expectations are what endpoint e of the suite must meet: its own, with
// the min-grade it states (its own, else the file's, else minGrade, the
// command line's). An endpoint with none is an error: checking it would
// test nothing.
func (s *Suite) Expectations(e Endpoint, minGrade string) ([]Expectation, error) {
	at := fmt.Sprintf("%s:%d", s.Path, e.Line)
	exps := e.Expectations
	if mg := cmp.Or(e.MinGrade, minGrade); mg != "" {
		g, err := ParseKV(KeyMinGrade, mg)
		if err != nil {
			return nil, fmt.Errorf("%s: min_grade: %v", at, err)
		}
		exps = append(slices.Clip(exps), g)
	}
	if len(exps) == 0 {
		return nil, fmt.Errorf("%s: endpoint %s has no expectations: add expect: (family: token_bucket, rate: 10/s±10%%, ...) or min_grade:", at, e.Label())
	}
	return exps, nil
}

// suiteFile and suiteEndpoint are the file's schema; their yaml tags are the
// only list of known keys (see unknownKeys).
type suiteFile struct {
	MaxTime     time.Duration   `yaml:"max_time"`
	MaxRequests int             `yaml:"max_requests"`
	Timeout     time.Duration   `yaml:"timeout"`
	MinGrade    string          `yaml:"min_grade"`
	Endpoints   []suiteEndpoint `yaml:"endpoints"`
}

type suiteEndpoint struct {
	Name        string        `yaml:"name"`
	Target      string        `yaml:"target"`
	Method      string        `yaml:"method"`
	Headers     []string      `yaml:"headers"`
	Body        string        `yaml:"body"`
	KeyHeader   string        `yaml:"key_header"`
	Timeout     time.Duration `yaml:"timeout"`
	MaxTime     time.Duration `yaml:"max_time"`
	MaxRequests int           `yaml:"max_requests"`
	MinGrade    string        `yaml:"min_grade"`
	Expect      yaml.Node     `yaml:"expect"`
}

// LoadSuite reads a suite file. Every problem is an error naming the file,
// the line and the key, and how to fix it.
func LoadSuite(path string) (*Suite, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseSuite(path, data)
}

// ParseSuite reads a suite from data; path names it in messages.
func ParseSuite(path string, data []byte) (*Suite, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(path, err)
	}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("%s: empty config: list endpoints: with a target: and expect: each", path)
	}
	doc := root.Content[0]
	if err := unknownKeys(path, doc); err != nil {
		return nil, err
	}
	var f suiteFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlError(path, err)
	}
	if len(f.Endpoints) == 0 {
		return nil, fmt.Errorf("%s: no endpoints: list them under endpoints:, each with a target: and expect:", path)
	}
	lines := endpointLines(doc)
	s := &Suite{Path: path}
	for i, fe := range f.Endpoints {
		at := fmt.Sprintf("%s:%d", path, lines[i])
		if strings.TrimSpace(fe.Target) == "" {
			return nil, fmt.Errorf("%s: endpoint %d has no target: (a URL, builtin:... or nginx:PATH)", at, i+1)
		}
		if fe.MaxTime < 0 || fe.MaxRequests < 0 || fe.Timeout < 0 || f.MaxTime < 0 || f.MaxRequests < 0 || f.Timeout < 0 {
			return nil, fmt.Errorf("%s: max_time, max_requests and timeout must be positive", at)
		}
		ep := Endpoint{Name: fe.Name, Target: fe.Target, Line: lines[i], Method: fe.Method, Headers: fe.Headers, Body: fe.Body,
			KeyHeader: fe.KeyHeader, Timeout: or(fe.Timeout, f.Timeout), MaxTime: or(fe.MaxTime, f.MaxTime),
			MaxRequests: or(fe.MaxRequests, f.MaxRequests), MinGrade: or(fe.MinGrade, f.MinGrade)}
		exps, err := suiteExpectations(path, &fe.Expect)
		if err != nil {
			return nil, err
		}
		ep.Expectations = exps
		s.Endpoints = append(s.Endpoints, ep)
	}
	return s, nil
}

// or is the endpoint's own setting, else the file's default.
func or[T comparable](own, def T) T {
	var zero T
	if own != zero {
		return own
	}
	return def
}

// yamlKeys are the yaml tags of a struct type: the keys a mapping of it
// may hold.
func yamlKeys(v any) []string {
	t := reflect.TypeOf(v)
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	return keys
}

// unknownKeys rejects a key the schema does not have, at its line, listing
// the known ones.
func unknownKeys(path string, doc *yaml.Node) error {
	if doc.Kind != yaml.MappingNode {
		return fmt.Errorf("%s:%d: the config is a mapping with endpoints: at the top level", path, doc.Line)
	}
	check := func(m *yaml.Node, known []string, where string) error {
		for i := 0; i+1 < len(m.Content); i += 2 {
			k := m.Content[i]
			if !contains(known, k.Value) {
				return fmt.Errorf("%s:%d: unknown key %q %s (known: %s)", path, k.Line, k.Value, where, strings.Join(known, ", "))
			}
		}
		return nil
	}
	if err := check(doc, yamlKeys(suiteFile{}), "at the top level"); err != nil {
		return err
	}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value != "endpoints" {
			continue
		}
		list := doc.Content[i+1]
		if list.Kind != yaml.SequenceNode {
			return fmt.Errorf("%s:%d: endpoints: is a list (- target: ...)", path, list.Line)
		}
		for _, item := range list.Content {
			if item.Kind != yaml.MappingNode {
				return fmt.Errorf("%s:%d: each endpoint is a mapping with a target: and expect:", path, item.Line)
			}
			if err := check(item, yamlKeys(suiteEndpoint{}), "in an endpoint"); err != nil {
				return err
			}
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// endpointLines is the line of each endpoint in the file.
func endpointLines(doc *yaml.Node) []int {
	var lines []int
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value == "endpoints" {
			for _, item := range doc.Content[i+1].Content {
				lines = append(lines, item.Line)
			}
		}
	}
	return lines
}

var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// yamlError rewrites yaml.v3's messages as FILE:LINE: messages.
func yamlError(path string, err error) error {
	var te *yaml.TypeError
	msgs := []string{strings.TrimPrefix(err.Error(), "yaml: ")}
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	for i, m := range msgs {
		if g := yamlLine.FindStringSubmatch(m); g != nil {
			msgs[i] = fmt.Sprintf("%s:%s: %s", path, g[1], g[2])
		} else {
			msgs[i] = path + ": " + m
		}
	}
	return errors.New(strings.Join(msgs, "; "))
}

// suiteExpectations reads an endpoint's expect: — a mapping (family:
// token_bucket) or a list of KEY=VALUE strings.
func suiteExpectations(path string, n *yaml.Node) ([]Expectation, error) {
	out, err := suiteItems(path, n)
	if err != nil {
		return nil, err
	}
	return out, onceEach(path, n, out)
}

// onceEach refuses a key given twice in one expect: (a mapping keeps only
// the last silently; a list would test both, one of them surely failing):
// which was meant is the user's to say.
func onceEach(path string, n *yaml.Node, exps []Expectation) error {
	first := map[string]int{}
	for i, e := range exps {
		line := itemLine(n, i)
		if at, ok := first[e.Key]; ok {
			return fmt.Errorf("%s:%d: expect: key '%s' given twice (first on line %d): keep one", path, line, e.Key, at)
		}
		first[e.Key] = line
	}
	return nil
}

// itemLine is the line of the i-th expectation of expect: n.
func itemLine(n *yaml.Node, i int) int {
	if n.Kind == yaml.MappingNode {
		return n.Content[2*i].Line
	}
	return n.Content[i].Line
}

// suiteItems parses expect: n, one expectation per key or list item.
func suiteItems(path string, n *yaml.Node) ([]Expectation, error) {
	var out []Expectation
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%s:%d: expectation %s: the value must be a single word or number", path, v.Line, k.Value)
			}
			e, err := ParseKV(k.Value, v.Value)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, k.Line, err)
			}
			out = append(out, e)
		}
	case yaml.SequenceNode:
		for _, it := range n.Content {
			if it.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%s:%d: a list under expect: holds KEY=VALUE strings", path, it.Line)
			}
			e, err := Parse(it.Value)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, it.Line, err)
			}
			out = append(out, e)
		}
	default:
		return nil, fmt.Errorf("%s:%d: expect: must be a mapping (family: token_bucket) or a list of KEY=VALUE", path, n.Line)
	}
	return out, nil
}
