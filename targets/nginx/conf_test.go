package nginx

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLex(t *testing.T) {
	src := "log_format x '$remote_addr \"q\"' \"a\\\"b\";  # comment\n" +
		"set $v ${host}x#y;\n" +
		"limit_req zone=z\n   burst=5\n  nodelay;\n"
	stmts, err := parse("f", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(stmts) != 3 {
		t.Fatalf("%d statements, want 3", len(stmts))
	}
	if got := stmts[0].args[1].val; got != `$remote_addr "q"` {
		t.Errorf("single-quoted value %q", got)
	}
	if got := stmts[0].args[2]; got.val != `a"b` || got.raw != `"a\"b"` {
		t.Errorf("double-quoted token %+v", got)
	}
	if got := stmts[1].args[1].val; got != "${host}x#y" {
		t.Errorf("${var} word %q", got)
	}
	if s := stmts[2]; s.line != 3 || s.endLine != 5 || len(s.args) != 3 {
		t.Errorf("multi-line directive: line %d, end %d, %d args", s.line, s.endLine, len(s.args))
	}
}

func TestParseErrors(t *testing.T) {
	for src, want := range map[string]string{
		"location / {\n  limit_req zone=z;\n":    `f:3: unexpected end of file, expecting "}"`,
		"limit_req zone=z;\n}\n":                 `f:2: unexpected "}"`,
		"limit_req zone=z\n":                     `f:2: unexpected end of file, expecting ";" or "}"`,
		"return 200 \"ok;\n":                     `f:1: unexpected end of file: unterminated quoted string`,
		"return 200 \"ok\"x;\n":                  `f:1: unexpected "x"`,
		"limit_req zone=z;\n;\n":                 `f:2: unexpected ";"`,
		"location / {\n  location /x { } }\n}\n": `f:3: unexpected "}"`,
	} {
		_, err := parse("f", src)
		if err == nil || err.Error() != want {
			t.Errorf("parse(%q): %v, want %s", src, err, want)
		}
	}
}

// generate renders a config file the way Start does, without nginx.
func generate(t *testing.T, path string, rp renderParams) (*plan, string, []origin) {
	t.Helper()
	abs, _ := filepath.Abs(path)
	stmts, err := loadFile(path, filepath.Dir(abs), 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := analyze(path, stmts, "/tmp/rc-dir")
	if err != nil {
		t.Fatal(err)
	}
	if rp.port == 0 {
		rp.port = 41000
	}
	if rp.backendAddr == "" {
		rp.backendAddr = "127.0.0.1:42000"
	}
	rp.generatedFor = path
	text, origins := p.render(rp)
	if n := strings.Count(text, "\n"); n != len(origins) {
		t.Fatalf("%d lines but %d origins", n, len(origins))
	}
	if _, err := parse("generated", text); err != nil {
		t.Fatalf("generated config does not parse: %v\n%s", err, text)
	}
	return p, text, origins
}

// lineOf returns the 1-based line of the first generated line containing s.
func lineOf(t *testing.T, text, s string) int {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	t.Fatalf("%q not in generated config:\n%s", s, text)
	return 0
}

func TestSnippetPlacementAndLineMap(t *testing.T) {
	_, text, origins := generate(t, td("two-zones.conf"), renderParams{})
	httpAt := lineOf(t, text, "http {")
	serverAt := lineOf(t, text, "server {")
	zoneAt := lineOf(t, text, "zone=everyone:1m")
	limitAt := lineOf(t, text, "limit_req zone=everyone burst=20;")
	if !(httpAt < zoneAt && zoneAt < serverAt && serverAt < limitAt) {
		t.Errorf("zones must be at http level and limit_req in the server:\n%s", text)
	}
	for gen, want := range map[int]origin{
		zoneAt:  {td("two-zones.conf"), 7},
		limitAt: {td("two-zones.conf"), 11},
		httpAt:  {},
	} {
		if got := origins[gen-1]; got != want {
			t.Errorf("generated line %d maps to %+v, want %+v", gen, got, want)
		}
	}
	for _, want := range []string{"listen 127.0.0.1:41000 default_server;", "location = " + ReadyPath, "return 204;",
		"proxy_pass http://ratecheck_backend;", "server 127.0.0.1:42000;", `pid "/tmp/rc-dir/nginx.pid";`,
		`client_body_temp_path "/tmp/rc-dir/tmp/client_body";`} {
		lineOf(t, text, want)
	}
	if strings.Contains(text, "daemon") {
		t.Error("generated config must not set daemon (Start passes -g 'daemon off;')")
	}
}

func TestSnippetWithoutLocationGetsOne(t *testing.T) {
	_, text, _ := generate(t, td("burst.conf"), renderParams{})
	loc := lineOf(t, text, "location / {")
	if lineOf(t, text, "limit_req zone=perip burst=5;") > loc {
		t.Errorf("server-level limit_req should precede the generated location:\n%s", text)
	}
	if lineOf(t, text, "proxy_pass http://ratecheck_backend;") != loc+1 {
		t.Errorf("generated location should proxy to the backend:\n%s", text)
	}
}

func TestSnippetUpstreamOption(t *testing.T) {
	u, _ := url.Parse("https://api.example.com")
	_, text, _ := generate(t, td("burst.conf"), renderParams{upstream: u, backendAddr: hostPort(u)})
	for _, want := range []string{"server api.example.com:443;", "proxy_pass https://ratecheck_backend;",
		`proxy_set_header Host "api.example.com";`, `proxy_ssl_name "api.example.com";`} {
		lineOf(t, text, want)
	}
}

func TestFullConfigRewrite(t *testing.T) {
	p, text, origins := generate(t, td("full.conf"), renderParams{})
	for _, bad := range []string{"8080", "/run/nginx.pid", "/var/log", "[::]"} {
		if strings.Contains(text, bad) {
			t.Errorf("generated config still contains %q:\n%s", bad, text)
		}
	}
	l := lineOf(t, text, "listen 127.0.0.1:41000 default_server;")
	if got := origins[l-1]; got != (origin{td("full.conf"), 19}) {
		t.Errorf("rewritten listen maps to %+v, want full.conf:19", got)
	}
	lineOf(t, text, `error_log "/tmp/rc-dir/error.log";`)
	lineOf(t, text, `access_log "/tmp/rc-dir/access.log";`)
	if p.mode != modeFull || p.needBackend {
		t.Errorf("mode %v needBackend %v", p.mode, p.needBackend)
	}
}

func TestIncludesAndServers(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "conf.d"), 0o755)
	os.WriteFile(filepath.Join(dir, "main.conf"), []byte(`events {}
http {
    include conf.d/*.conf;
}
`), 0o644)
	os.WriteFile(filepath.Join(dir, "conf.d", "a.conf"), []byte(`server {
    listen 80 default_server;
    location / { return 200; }
}
`), 0o644)
	os.WriteFile(filepath.Join(dir, "conf.d", "b.conf"), []byte(`# no listen: nginx would use *:80
server {
    server_name b.example;
    limit_req zone=z;
}
`), 0o644)
	p, text, origins := generate(t, filepath.Join(dir, "main.conf"), renderParams{})
	if n := strings.Count(text, "listen 127.0.0.1:41000"); n != 2 {
		t.Errorf("%d rewritten listens, want one per server:\n%s", n, text)
	}
	if n := strings.Count(text, "default_server"); n != 1 {
		t.Errorf("%d default_server, want 1:\n%s", n, text)
	}
	l := lineOf(t, text, "server_name b.example;")
	if got := origins[l-1]; got != (origin{filepath.Join(dir, "conf.d", "b.conf"), 3}) {
		t.Errorf("included line maps to %+v", got)
	}
	if notes := strings.Join(p.notes, "\n"); !strings.Contains(notes, "a.conf:1: listen `80 default_server` rewritten") {
		t.Errorf("notes: %s", notes)
	}
	if lineOf(t, text, "location = "+ReadyPath) < lineOf(t, text, "listen 127.0.0.1:41000 default_server") {
		t.Error("ready location must be in the default server")
	}
}

func TestServerFileAndRefusals(t *testing.T) {
	dir := t.TempDir()
	srv := filepath.Join(dir, "site.conf")
	os.WriteFile(srv, []byte("limit_req_zone $binary_remote_addr zone=z:1m rate=1r/s;\nserver {\n    listen 443 ssl http2;\n    location / { limit_req zone=z; empty_gif; }\n}\n"), 0o644)
	p, text, _ := generate(t, srv, renderParams{})
	if p.mode != modeServers || lineOf(t, text, "zone=z:1m") < lineOf(t, text, "http {") {
		t.Errorf("server-level file not placed in http:\n%s", text)
	}
	if notes := strings.Join(p.notes, "\n"); !strings.Contains(notes, "ssl, http2 dropped") {
		t.Errorf("notes %q", notes)
	}

	bad := filepath.Join(dir, "stream.conf")
	os.WriteFile(bad, []byte("events {}\nhttp { server { listen 80; } }\nstream {\n  server { listen 53 udp; }\n}\n"), 0o644)
	stmts, _ := loadFile(bad, dir, 0)
	_, err := analyze(bad, stmts, "/tmp/rc")
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Line != 3 || !strings.Contains(err.Error(), "stream") {
		t.Errorf("stream block: %v", err)
	}
}

func TestConfigErrorParsing(t *testing.T) {
	lm := &lineMap{user: "u.conf", gen: "/tmp/d/nginx.conf", origins: []origin{{}, {"u.conf", 7}, {"inc.conf", 2}}}
	for out, want := range map[string]ConfigError{
		"nginx: [emerg] unknown directive \"x\" in /tmp/d/nginx.conf:2\nnginx: configuration file /tmp/d/nginx.conf test failed\n": {
			File: "u.conf", Line: 7, NginxMessage: `[emerg] unknown directive "x"`},
		"2026/11/29 18:56:32 [emerg] 8924#8924: invalid parameter \"y\" in /tmp/d/nginx.conf:3\n": {
			File: "inc.conf", Line: 2, NginxMessage: `[emerg] invalid parameter "y"`},
		"nginx: [warn] something\nnginx: [emerg] \"listen\" directive is not allowed here in /tmp/d/nginx.conf:1\n": {
			File: "u.conf", NginxMessage: `[emerg] "listen" directive is not allowed here`, inGenerated: true, generatedLine: 1},
	} {
		got := lm.configError(out)
		if got == nil || *got != want {
			t.Errorf("configError(%q)\n got %+v\nwant %+v", out, got, want)
		}
	}
	if got := lm.translate("bind() failed in /tmp/d/nginx.conf:2 and in /tmp/d/nginx.conf:1"); got != "bind() failed in u.conf:7 and in a line ratecheck generated (/tmp/d/nginx.conf:1)" {
		t.Errorf("translate: %q", got)
	}
}
