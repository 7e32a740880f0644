package haproxy

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ratecheck/ratecheck/internal/testenv"
)

func TestSplitWords(t *testing.T) {
	for in, want := range map[string][]string{
		"  http-request deny if { src 1.2.3.4 }  # comment": {"http-request", "deny", "if", "{", "src", "1.2.3.4", "}"},
		`server "a b" 'x#y' c\ d`:                           {"server", "a b", "x#y", "c d"},
		`log-format "%ci \"q\""`:                            {"log-format", `%ci "q"`},
		"# only a comment":                                  nil,
		"":                                                  nil,
	} {
		if got := splitWords(in); !reflect.DeepEqual(got, want) {
			t.Errorf("splitWords(%q) = %q, want %q", in, got, want)
		}
	}
}

func analyzeText(t *testing.T, text string) (*plan, string, error) {
	t.Helper()
	path := testenv.WriteConf(t, "x.cfg", text)
	lines, err := readLines(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := analyze(path, lines)
	return p, path, err
}

// genLine finds the generated line holding s and the user's line it came
// from (0 when ratecheck wrote it).
func genLine(t *testing.T, text string, origins []origin, s string) (int, origin) {
	t.Helper()
	for i, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if strings.Contains(l, s) {
			return i + 1, origins[i]
		}
	}
	t.Fatalf("no generated line holds %q in\n%s", s, text)
	return 0, origin{}
}

func TestSnippetIsWrappedAndMapped(t *testing.T) {
	p, path, err := analyzeText(t, "stick-table type ip size 1k expire 30s store http_req_rate(10s)\nbind :80\nhttp-request track-sc0 src\n")
	if err != nil {
		t.Fatal(err)
	}
	text, origins := p.render(renderParams{port: 4242, backendAddr: "127.0.0.1:9", nonce: "n0"})
	for _, want := range []string{"global\n    noreuseport\n", "defaults\n    mode http\n", "frontend ratecheck\n    bind 127.0.0.1:4242\n    http-request return status 204 hdr x-ratecheck-ready n0 if { path /__ratecheck_ready }\n",
		"    default_backend ratecheck_backend\n", "backend ratecheck_backend\n    mode http\n    server app 127.0.0.1:9\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("generated config lacks %q:\n%s", want, text)
		}
	}
	// The ready rule comes before the user's first rule, so it never
	// reaches the stick table.
	ready, _ := genLine(t, text, origins, ReadyPath)
	track, o := genLine(t, text, origins, "track-sc0")
	if ready >= track {
		t.Errorf("ready rule at line %d, user's track-sc0 at %d: it must come first", ready, track)
	}
	if o != (origin{file: path, line: 3}) {
		t.Errorf("track-sc0 maps to %+v, want %s:3", o, path)
	}
	if _, o := genLine(t, text, origins, "dropped by ratecheck) bind :80"); o.line != 2 {
		t.Errorf("the dropped bind maps to %+v", o)
	}
	if len(p.notes) != 1 || !strings.HasPrefix(p.notes[0], path+":2: `bind :80` dropped") {
		t.Errorf("notes %q", p.notes)
	}
}

func TestSnippetWithItsOwnBackendGetsNoDefaultBackend(t *testing.T) {
	p, _, err := analyzeText(t, "use_backend b if TRUE\n")
	if err != nil {
		t.Fatal(err)
	}
	if text, _ := p.render(renderParams{port: 1, backendAddr: "127.0.0.1:9"}); strings.Contains(text, "default_backend") {
		t.Errorf("a default_backend was added to a snippet with use_backend:\n%s", text)
	}
}

func TestSectionsAreSandboxed(t *testing.T) {
	p, path, err := analyzeText(t, `global
    daemon
    user haproxy
    stats socket /run/haproxy/admin.sock
    log 10.0.0.1:514 local0
frontend stats
    bind :9000
    http-request return status 200
listen api
    bind *:8080
    bind :8443 ssl crt /x.pem
    server s1 10.0.0.5:80 check ssl verify required
backend other
    default-server ssl
    server s2 192.168.1.2:80
`)
	if err != nil {
		t.Fatal(err)
	}
	text, origins := p.render(renderParams{port: 4242, backendAddr: "127.0.0.1:9", nonce: "n0"})
	if p.target == nil || p.target.name != "stats" {
		t.Fatalf("target %+v: want the first proxy with a bind (stats)", p.target)
	}
	for _, bad := range []string{"\n    daemon", "\n    user haproxy", "\n    stats socket", "10.0.0", "192.168", ":9000", ":8080", ":8443", "ssl", "\n    default-server"} {
		for _, l := range strings.Split(text, "\n") {
			if strings.Contains(l, bad) && !strings.Contains(l, "(dropped by ratecheck)") {
				t.Errorf("generated line %q still holds %q", l, bad)
			}
		}
	}
	if _, o := genLine(t, text, origins, "bind 127.0.0.1:4242"); o != (origin{file: path, line: 7}) {
		t.Errorf("the generated bind maps to %+v, want the user's bind at line 7", o)
	}
	if _, o := genLine(t, text, origins, "server s1 127.0.0.1:9"); o.line != 12 {
		t.Errorf("server s1 maps to %+v", o)
	}
	if !strings.Contains(text, "server s2 127.0.0.1:9\n") || !strings.Contains(text, "    noreuseport\n") || !strings.Contains(text, "defaults\n    mode http") {
		t.Errorf("generated config:\n%s", text)
	}
	// The target has no backend of its own: it gets ratecheck's.
	if !strings.Contains(text, "    http-request return status 200\n    default_backend ratecheck_backend\n") {
		t.Errorf("no default_backend added to the target frontend:\n%s", text)
	}
}

func TestSectionsWithoutAProxyOrWithPeersAreRefused(t *testing.T) {
	_, path, err := analyzeText(t, "global\n    maxconn 10\nbackend b\n    server s 127.0.0.1:1\n")
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.File != path || !strings.Contains(err.Error(), "no frontend or listen section") {
		t.Errorf("no proxy: %v", err)
	}
	_, path, err = analyzeText(t, "frontend f\n    bind :80\n\npeers mine\n    peer a 10.0.0.1:1024\n")
	if !errors.As(err, &ce) || ce.File != path || ce.Line != 4 || !strings.HasPrefix(err.Error(), path+":4: ratecheck cannot run this haproxy config: a \"peers\" section") {
		t.Errorf("peers: %v", err)
	}
}

// haproxy -c output as HAProxy 2.6 prints it.
func TestConfigErrorTranslatesHAProxyOutput(t *testing.T) {
	lm := &lineMap{user: "mine.cfg", gen: "/tmp/d/haproxy.cfg", origins: []origin{{}, {}, {"mine.cfg", 1}, {"mine.cfg", 2}}}
	out := `[NOTICE]   (4437) : haproxy version is 2.6.12-1+deb12u4
[WARNING]  (4437) : config : parsing [/tmp/d/haproxy.cfg:3] : a 'http-request' rule placed after a 'use_backend' rule will still be processed before.
[ALERT]    (4437) : config : parsing [/tmp/d/haproxy.cfg:4]: 'http-request deny' expects either 'if' or 'unless' followed by a condition but found 'deny_statuz'.
[ALERT]    (4437) : config : Error(s) found in configuration file : /tmp/d/haproxy.cfg
`
	ce := lm.configError(out)
	if ce == nil || ce.File != "mine.cfg" || ce.Line != 2 || ce.HAProxyMessage != "'http-request deny' expects either 'if' or 'unless' followed by a condition but found 'deny_statuz'" {
		t.Fatalf("configError = %+v", ce)
	}
	if w := lm.warnings(out); len(w) != 1 || !strings.Contains(w[0], "[mine.cfg:1]") {
		t.Errorf("warnings %q", w)
	}
	ce = lm.configError("[ALERT]    (1) : config : parsing [/tmp/d/haproxy.cfg:2] : unknown keyword 'x' in 'frontend' section\n")
	if ce == nil || !ce.inGenerated || ce.generatedLine != 2 || !strings.Contains(ce.Error(), "which ratecheck added itself") {
		t.Errorf("a generated line: %+v", ce)
	}
	ce = lm.configError("[ALERT]    (1) : config : Proxy 'ratecheck': unable to find required use_backend: 'nope'.\n[ALERT]    (1) : config : Fatal errors found in configuration.\n")
	if ce == nil || ce.Line != 0 || ce.HAProxyMessage != "Proxy 'ratecheck': unable to find required use_backend: 'nope'" {
		t.Errorf("no line: %+v", ce)
	}
}
