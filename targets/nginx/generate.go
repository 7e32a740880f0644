package nginx

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
)

// ReadyPath is a location that Start adds to the server it targets. It
// answers `return 204` in the rewrite phase, before limit_req and limit_conn
// run, so it is never limited: it serves as the readiness probe and lets a
// client open (warm) keep-alive connections without spending the zone.
const ReadyPath = "/__ratecheck_ready"

// backendName is the upstream block through which injected locations reach
// their content (the internal HTTP server or Options.Upstream).
const backendName = "ratecheck_backend"

type confMode int

const (
	modeSnippet confMode = iota // limit_* directives and locations: ratecheck writes main, events, http and server
	modeServers                 // a conf.d-style file: server blocks at the top level, placed inside http
	modeFull                    // a complete nginx.conf with an http block
)

func (m confMode) String() string {
	switch m {
	case modeSnippet:
		return "snippet"
	case modeServers:
		return "server-level file"
	default:
		return "full nginx.conf"
	}
}

// Directives that only make sense in the main context, and in http, when a
// snippet mixes them with server-level ones.
var mainOnly = set("load_module", "env", "user", "worker_processes", "worker_rlimit_nofile",
	"worker_rlimit_core", "worker_priority", "worker_cpu_affinity", "worker_shutdown_timeout",
	"timer_resolution", "thread_pool", "pcre_jit", "master_process", "ssl_engine",
	"google_perftools_profiles", "debug_points", "events")

var httpOnly = set("limit_req_zone", "limit_conn_zone", "map", "geo", "geoip_country",
	"geoip_city", "geoip_org", "geoip_proxy", "geoip_proxy_recursive", "upstream",
	"split_clients", "log_format", "proxy_cache_path", "fastcgi_cache_path", "uwsgi_cache_path",
	"scgi_cache_path", "server_names_hash_bucket_size", "server_names_hash_max_size",
	"variables_hash_bucket_size", "variables_hash_max_size", "map_hash_bucket_size",
	"map_hash_max_size", "js_import", "js_path", "js_set", "js_shared_dict_zone", "perl_modules",
	"perl_require", "perl_set", "lua_shared_dict", "lua_package_path", "lua_package_cpath",
	"init_by_lua", "init_by_lua_block", "init_by_lua_file", "init_worker_by_lua",
	"init_worker_by_lua_block", "init_worker_by_lua_file", "keyval_zone", "keyval")

// Directives that make a location produce its own response; a snippet
// location without any of them gets proxy_pass to the backend.
var contentDirectives = set("proxy_pass", "fastcgi_pass", "uwsgi_pass", "scgi_pass", "grpc_pass",
	"memcached_pass", "return", "try_files", "root", "alias", "autoindex", "empty_gif",
	"stub_status", "echo", "echo_exec", "js_content", "content_by_lua", "content_by_lua_block",
	"content_by_lua_file", "perl", "flv", "mp4", "api", "status", "random_index")

// Directives whose paths ratecheck replaces with its own.
var dropped = set("daemon", "pid", "lock_file", "working_directory", "client_body_temp_path",
	"proxy_temp_path", "fastcgi_temp_path", "uwsgi_temp_path", "scgi_temp_path")

var cachePaths = set("proxy_cache_path", "fastcgi_cache_path", "uwsgi_cache_path", "scgi_cache_path")

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// plan is the user's configuration, analysed and sandboxed, ready to be
// rendered for a given port.
type plan struct {
	userPath string
	mode     confMode
	dir      string

	main   []*stmt // snippet/servers: main-context directives; full: the whole file
	events *stmt
	http   []*stmt
	server []*stmt // snippet only

	needBackend bool // some location answers through the backend upstream
	notes       []string
}

// renderParams are the parts of the generated config chosen at start time.
type renderParams struct {
	port         int
	backendAddr  string   // host:port of the content server (internal or Options.Upstream)
	upstream     *url.URL // Options.Upstream, nil for the internal server
	nofile       int      // worker_rlimit_nofile for generated main sections; 0: leave alone
	workerConns  int
	generatedFor string
	tlsCert      string // absolute paths: the listener speaks TLS (Options.TLSCertFile)
	tlsKey       string
	http2        bool // the TLS listener offers HTTP/2 too (Options.HTTP2)
}

func (p *plan) notef(s *stmt, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if s != nil && s.file != "" {
		msg = fmt.Sprintf("%s:%d: %s", s.file, s.endLine, msg)
	}
	p.notes = append(p.notes, msg)
}

// analyze classifies the user's statements, forces every path into dir and
// replaces listen directives with placeholders. It reports what it cannot
// run safely as a *ConfigError.
func analyze(userPath string, stmts []*stmt, dir string) (*plan, error) {
	p := &plan{userPath: userPath, dir: dir}
	hasHTTP, hasServer := false, false
	for _, s := range stmts {
		switch s.name {
		case "http":
			hasHTTP = true
		case "server":
			if s.hasBlock {
				hasServer = true
			}
		case "stream", "mail":
			if s.hasBlock {
				return nil, &ConfigError{File: s.file, Line: s.endLine,
					Reason: fmt.Sprintf("a %q block cannot be safely rewritten: its listeners would open ports outside ratecheck's control (ratecheck targets HTTP only; remove the block)", s.name)}
			}
		}
	}
	switch {
	case hasHTTP:
		p.mode = modeFull
	case hasServer:
		p.mode = modeServers
	default:
		p.mode = modeSnippet
	}
	stmts = p.sandbox(stmts)
	cacheN := 0
	walk(stmts, nil, func(s *stmt, _ []*stmt) bool {
		if cachePaths[s.name] && len(s.args) > 0 {
			cacheN++
			s.args[0] = rawArg(quote(filepath.Join(dir, "cache", strconv.Itoa(cacheN))))
		}
		return true
	})

	switch p.mode {
	case modeFull:
		p.main = stmts
		var servers []*stmt
		for _, s := range stmts {
			if s.name == "http" && s.hasBlock {
				for _, c := range s.block {
					if c.name == "server" && c.hasBlock {
						servers = append(servers, c)
					}
				}
			}
		}
		if len(servers) == 0 {
			return nil, &ConfigError{File: userPath, Reason: "the http block has no server block, so nothing would listen"}
		}
		p.rewriteServers(servers)
	case modeServers:
		var servers []*stmt
		for _, s := range stmts {
			switch {
			case mainOnly[s.name] && s.name == "events":
				p.events = s
			case mainOnly[s.name]:
				p.main = append(p.main, s)
			default:
				p.http = append(p.http, s)
				if s.name == "server" && s.hasBlock {
					servers = append(servers, s)
				}
			}
		}
		p.rewriteServers(servers)
	case modeSnippet:
		for _, s := range stmts {
			switch {
			case s.name == "events":
				p.events = s
			case mainOnly[s.name]:
				p.main = append(p.main, s)
			case httpOnly[s.name]:
				p.http = append(p.http, s)
			case s.name == "listen":
				p.notef(s, "`listen` dropped: ratecheck listens on a loopback port of its own")
			case s.name == "server_name":
				p.server = append(p.server, s)
			default:
				p.server = append(p.server, s)
			}
		}
		hasLocation := false
		for _, s := range p.server {
			if s.name == "location" && s.hasBlock {
				hasLocation = true
			}
		}
		p.injectContent(p.server)
		if !hasLocation {
			p.needBackend = true
		}
	}
	p.checkReturnBypass(stmts)
	return p, nil
}

// sandbox rewrites, recursively, the directives that would touch the user's
// nginx installation or the system, and returns the filtered top level.
func (p *plan) sandbox(ss []*stmt) []*stmt {
	out := make([]*stmt, 0, len(ss))
	for _, s := range ss {
		if dropped[s.name] && !s.hasBlock {
			continue
		}
		if s.name == "ssl" && !s.hasBlock && s.arg(0) == "on" {
			p.notef(s, "`ssl on` dropped: ratecheck talks plain HTTP to its loopback listener")
			continue
		}
		switch s.name {
		case "error_log":
			if len(s.args) > 0 && s.arg(0) != "stderr" && !strings.HasPrefix(s.arg(0), "memory:") {
				s.args[0] = rawArg(quote(filepath.Join(p.dir, "error.log")))
			}
		case "access_log":
			if len(s.args) > 0 && s.arg(0) != "off" {
				s.args[0] = rawArg(quote(filepath.Join(p.dir, "access.log")))
			}
		}
		if s.hasBlock {
			s.block = p.sandbox(s.block)
		}
		out = append(out, s)
	}
	return out
}

// rawArg is an argument ratecheck writes, already quoted as needed.
func rawArg(raw string) token {
	val := raw
	if len(raw) >= 2 && raw[0] == '"' {
		val = unescape(raw[1 : len(raw)-1])
	}
	return token{kind: tokWord, raw: raw, val: val}
}

// rewriteServers replaces every listen of every server by one placeholder that
// renders as `listen 127.0.0.1:PORT`, marks one server default_server, and
// adds ReadyPath to it.
func (p *plan) rewriteServers(servers []*stmt) {
	def := -1
	for i, srv := range servers {
		for _, c := range srv.block {
			if c.name == "listen" {
				for _, a := range c.args[min(1, len(c.args)):] {
					if a.val == "default_server" || a.val == "default" {
						if def < 0 {
							def = i
						}
					}
				}
			}
		}
	}
	if def < 0 {
		def = 0
	}
	for i, srv := range servers {
		var first *stmt
		var rest []*stmt
		var droppedParams []string
		var rewritten []string
		for _, c := range srv.block {
			if c.name != "listen" || c.hasBlock {
				rest = append(rest, c)
				continue
			}
			words := []string{}
			for _, a := range c.args {
				words = append(words, a.val)
			}
			rewritten = append(rewritten, strings.Join(words, " "))
			for _, a := range c.args[min(1, len(c.args)):] {
				switch a.val {
				case "ssl", "http2", "quic", "proxy_protocol", "spdy":
					droppedParams = append(droppedParams, a.val)
				}
			}
			if first == nil {
				first = &stmt{name: "listen", rawName: "listen", file: c.file, line: c.line, endLine: c.endLine, ph: phListen}
				rest = append(rest, first)
			}
		}
		if first == nil {
			first = &stmt{name: "listen", rawName: "listen", ph: phListen}
			rest = append([]*stmt{first}, rest...)
		}
		first.defaultServer = i == def
		if i == def {
			for k, c := range rest {
				if c == first {
					rest = append(rest[:k+1], append([]*stmt{readyLocation()}, rest[k+1:]...)...)
					break
				}
			}
		}
		srv.block = rest
		where := srv
		if len(rewritten) > 0 {
			p.notef(where, "listen %s rewritten to 127.0.0.1:<port>", strings.Join(quoteEach(rewritten), ", "))
		}
		if len(droppedParams) > 0 {
			p.notef(where, "listen parameters %s dropped: ratecheck talks plain HTTP/1.1 to its loopback listener", strings.Join(dedupe(droppedParams), ", "))
		}
	}
	if len(servers) > 1 {
		p.notef(servers[def], "this server is the default_server on the loopback port and the one ratecheck's URL reaches; the other %d server blocks answer only to their server_name in the Host header", len(servers)-1)
	}
}

func quoteEach(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "`" + s + "`"
	}
	return out
}

func dedupe(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// backendPass is `proxy_pass <scheme>://ratecheck_backend;`, the scheme
// filled in at render time.
func backendPass() *stmt {
	s := genStmt("proxy_pass")
	s.ph = phBackend
	return s
}

func readyLocation() *stmt {
	return genBlock("location", []string{"=", ReadyPath},
		genStmt("access_log", "off"),
		genStmt("return", "204"),
	)
}

// injectContent gives every location without a content handler a proxy_pass
// to the backend, so that it answers 200 after limit_req has run.
func (p *plan) injectContent(ss []*stmt) {
	for _, s := range ss {
		if s.name != "location" || !s.hasBlock {
			continue
		}
		has := false
		for _, c := range s.block {
			if contentDirectives[c.name] || strings.HasPrefix(c.name, "echo") {
				has = true
			}
		}
		if !has {
			s.block = append(s.block, backendPass())
			p.needBackend = true
		}
		p.injectContent(s.block)
	}
}

// checkReturnBypass notes every server or location that answers with a plain
// `return` while a limit_req or limit_conn is in effect there: return runs in
// the rewrite phase, before the preaccess phase, so nginx never limits it.
func (p *plan) checkReturnBypass(stmts []*stmt) {
	var rec func(ss []*stmt, ctx string, limited bool)
	rec = func(ss []*stmt, ctx string, limited bool) {
		own := false
		for _, s := range ss {
			if s.name == "limit_req" || s.name == "limit_conn" {
				own = true
			}
		}
		limited = limited || own
		for _, s := range ss {
			if s.name == "return" && limited && s.file != "" {
				p.notef(s, "`return` in %s answers in the rewrite phase, before limit_req/limit_conn run (preaccess phase): nginx never limits these requests", ctxName(ctx))
			}
		}
		for _, s := range ss {
			if s.hasBlock && s.name != "if" && s.name != "upstream" && s.name != "map" &&
				s.name != "geo" && s.name != "types" && s.name != "split_clients" && s.name != "limit_except" {
				name := s.name
				for _, a := range s.args {
					name += " " + a.val
				}
				rec(s.block, name, limited)
			}
		}
	}
	top := "server"
	if p.mode != modeSnippet {
		top = "main"
	}
	rec(stmts, top, false)
}

func ctxName(ctx string) string {
	if ctx == "server" {
		return "the server (snippet top level)"
	}
	return "`" + ctx + "`"
}

// render writes the complete configuration for one start attempt.
func (p *plan) render(rp renderParams) (string, []origin) {
	w := &writer{port: rp.port, backendURL: backendURL(rp), tlsCert: rp.tlsCert, tlsKey: rp.tlsKey, http2: rp.http2}
	w.line(0, "# Generated by ratecheck from "+rp.generatedFor+" ("+p.mode.String()+").", origin{})
	w.line(0, "# Lines without a counterpart in that file are ratecheck's; see package targets/nginx.", origin{})
	d := p.dir
	gen := []*stmt{
		genStmt("pid", quote(filepath.Join(d, "nginx.pid"))),
		genStmt("lock_file", quote(filepath.Join(d, "nginx.lock"))),
	}
	hasMain := func(name string) bool {
		for _, s := range p.main {
			if s.name == name {
				return true
			}
		}
		return false
	}
	if !hasMain("error_log") {
		gen = append(gen, genStmt("error_log", quote(filepath.Join(d, "error.log")), "warn"))
	}
	if p.mode != modeFull {
		if !hasMain("master_process") {
			gen = append(gen, genStmt("master_process", "on"))
		}
		if !hasMain("worker_processes") {
			gen = append(gen, genStmt("worker_processes", "1"))
		}
		if rp.nofile > 0 && !hasMain("worker_rlimit_nofile") {
			gen = append(gen, genStmt("worker_rlimit_nofile", strconv.Itoa(rp.nofile)))
		}
	}
	w.stmts(0, gen)

	httpHead := []*stmt{
		genStmt("client_body_temp_path", quote(filepath.Join(d, "tmp", "client_body"))),
		genStmt("proxy_temp_path", quote(filepath.Join(d, "tmp", "proxy"))),
		genStmt("fastcgi_temp_path", quote(filepath.Join(d, "tmp", "fastcgi"))),
		genStmt("uwsgi_temp_path", quote(filepath.Join(d, "tmp", "uwsgi"))),
		genStmt("scgi_temp_path", quote(filepath.Join(d, "tmp", "scgi"))),
	}
	if p.needBackend {
		httpHead = append(httpHead, p.backendStmts(rp)...)
	}

	if p.mode == modeFull {
		for _, s := range p.main {
			if s.name == "http" && s.hasBlock {
				withHead := *s
				withHead.block = append(append([]*stmt{}, httpHead...), s.block...)
				s = &withHead
			}
			w.stmt(0, s)
		}
		return w.b.String(), w.origins
	}

	w.stmts(0, p.main)
	if p.events != nil {
		w.stmt(0, p.events)
	} else {
		conns := rp.workerConns
		if conns <= 0 {
			conns = 1024
		}
		w.stmt(0, genBlock("events", nil, genStmt("worker_connections", strconv.Itoa(conns))))
	}
	body := append([]*stmt{genStmt("access_log", "off")}, httpHead...)
	body = append(body, p.http...)
	if p.mode == modeSnippet {
		srv := []*stmt{
			{name: "listen", rawName: "listen", ph: phListen, defaultServer: true},
			readyLocation(),
		}
		srv = append(srv, p.server...)
		hasLocation := false
		for _, s := range p.server {
			if s.name == "location" && s.hasBlock {
				hasLocation = true
			}
		}
		if !hasLocation {
			srv = append(srv, genBlock("location", []string{"/"}, backendPass()))
		}
		body = append(body, genBlock("server", nil, srv...))
	}
	w.stmt(0, genBlock("http", nil, body...))
	return w.b.String(), w.origins
}

// backendStmts are the http-level directives for the content upstream: an
// upstream block with keep-alive connections (nginx otherwise opens one
// connection per request), HTTP/1.1 and, for Options.Upstream, the Host and
// TLS name of the real server.
func (p *plan) backendStmts(rp renderParams) []*stmt {
	ss := []*stmt{
		genBlock("upstream", []string{backendName},
			genStmt("server", rp.backendAddr),
			genStmt("keepalive", "64"),
		),
		genStmt("proxy_http_version", "1.1"),
		genStmt("proxy_set_header", "Connection", `""`),
	}
	if rp.upstream != nil {
		ss = append(ss, genStmt("proxy_set_header", "Host", quote(rp.upstream.Host)))
		if rp.upstream.Scheme == "https" {
			ss = append(ss,
				genStmt("proxy_ssl_server_name", "on"),
				genStmt("proxy_ssl_name", quote(rp.upstream.Hostname())))
		}
	}
	return ss
}

func backendURL(rp renderParams) string {
	scheme := "http"
	if rp.upstream != nil && rp.upstream.Scheme == "https" {
		scheme = "https"
	}
	return scheme + "://" + backendName
}
