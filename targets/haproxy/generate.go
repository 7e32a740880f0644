package haproxy

import (
	"fmt"
	"strings"
)

// ReadyPath is answered by the first rule of the frontend ratecheck targets
// (`http-request return status 204`), before any of the user's rules, so
// polling it never touches the stick table.
const ReadyPath = "/__ratecheck_ready"

// readyHeader carries a per-start nonce in the ReadyPath answer, proving the
// answer came from the HAProxy this Start launched.
const readyHeader = "x-ratecheck-ready"

// backendName is the generated backend that forwards to the internal server.
const backendName = "ratecheck_backend"

type confMode int

const (
	modeSnippet  confMode = iota // frontend lines: ratecheck writes every section
	modeSections                 // the user's sections, sandboxed
)

func (m confMode) String() string {
	if m == modeSnippet {
		return "snippet"
	}
	return "config with sections"
}

// plan is the user's configuration, analysed and sandboxed, ready to be
// rendered for a port.
type plan struct {
	userPath string
	mode     confMode
	lines    []*line    // snippet: the frontend lines
	sections []*section // sections mode
	target   *section   // sections mode: the proxy that gets the port

	dropped     map[*line]bool
	servers     map[*line]bool // server lines pointed at the internal backend
	bindLine    *line          // the user's bind that the generated bind replaces
	addBackend  bool           // the target proxy gets default_backend ratecheck_backend
	hasGlobal   bool
	hasDefaults bool
	notes       []string
}

// renderParams are the parts of the generated config chosen at start time.
type renderParams struct {
	port        int
	backendAddr string // host:port of the internal server
	nonce       string
}

// origin is where a generated line came from in the user's files; the zero
// value is a line ratecheck wrote.
type origin struct {
	file string
	line int
}

func (p *plan) notef(l *line, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if l != nil {
		msg = l.where() + ": " + msg
	}
	p.notes = append(p.notes, msg)
}

func (p *plan) drop(l *line, why string) {
	p.dropped[l] = true
	p.notef(l, "`%s` dropped: %s", strings.Join(l.words, " "), why)
}

// analyze classifies the user's lines and decides what to rewrite. What
// ratecheck cannot run safely is a *ConfigError.
func analyze(userPath string, lines []*line) (*plan, error) {
	p := &plan{userPath: userPath, dropped: map[*line]bool{}, servers: map[*line]bool{}}
	secs := sectionsOf(lines)
	if len(secs) == 1 {
		p.mode, p.lines = modeSnippet, lines
		for _, l := range lines {
			switch {
			case l.keyword() == "bind":
				p.drop(l, "ratecheck binds its own loopback port")
			case isLogTarget(l):
				p.drop(l, "ratecheck sends no logs to syslog or over the network (`log stdout` and `log stderr` are kept)")
			}
		}
		p.addBackend = !hasKeyword(lines, "default_backend", "use_backend")
		return p, nil
	}
	p.mode, p.sections = modeSections, secs
	for _, s := range secs {
		if why, refused := refusedSections[s.kind]; refused {
			return nil, &ConfigError{File: s.head.file, Line: s.head.num,
				Reason: fmt.Sprintf("a %q section cannot be run safely: %s (remove it; ratecheck tests the frontend's rules on loopback)", s.kind, why)}
		}
		switch s.kind {
		case "global":
			p.hasGlobal = true
		case "defaults":
			p.hasDefaults = true
		}
		if isProxy(s.kind) && p.target == nil && hasKeyword(s.body, "bind") {
			p.target = s
		}
	}
	if p.target == nil {
		for _, s := range secs {
			if isProxy(s.kind) {
				p.target = s
				break
			}
		}
	}
	if p.target == nil {
		return nil, &ConfigError{File: userPath, Reason: "it has no frontend or listen section, so nothing would receive requests (write one, or give a snippet of frontend lines)"}
	}
	for _, s := range secs {
		if err := p.sandboxSection(s); err != nil {
			return nil, err
		}
	}
	t := p.target
	p.addBackend = !hasKeyword(t.body, "default_backend", "use_backend") && !(t.kind == "listen" && hasKeyword(t.body, "server"))
	if p.addBackend {
		p.notef(t.head, "%s %q has no backend: ratecheck adds `default_backend %s`, answered 200 by its loopback server", t.kind, t.name, backendName)
	}
	return p, nil
}

func (p *plan) sandboxSection(s *section) error {
	for _, l := range s.body {
		kw := l.keyword()
		switch {
		case s.kind == "global" && droppedGlobal[kw] != "":
			p.drop(l, droppedGlobal[kw])
		case s.kind == "global" && kw == "stats" && l.word(1) == "socket":
			p.drop(l, "ratecheck opens no control socket")
		case isLogTarget(l):
			p.drop(l, "ratecheck sends no logs to syslog or over the network (`log stdout` and `log stderr` are kept)")
		case kw == "bind" && s == p.target:
			if p.bindLine == nil {
				p.bindLine = l
				p.notef(l, "`%s` rewritten to `bind 127.0.0.1:<port>`", strings.Join(l.words, " "))
			} else {
				p.drop(l, "ratecheck listens on one loopback port")
			}
		case kw == "bind":
			p.drop(l, fmt.Sprintf("only %s %q is reachable: ratecheck binds one frontend, the first with a bind", p.target.kind, p.target.name))
		case kw == "server-template":
			return &ConfigError{File: l.file, Line: l.num, Reason: "server-template is not supported: ratecheck points every server at its own loopback server; write a `server` line"}
		case kw == "default-server":
			p.drop(l, "ratecheck's loopback server takes no server parameters")
		case kw == "server" && (s.kind == "backend" || s.kind == "listen"):
			p.servers[l] = true
			p.notef(l, "server %q (%s) now forwards to ratecheck's loopback server, which answers 200; its parameters are dropped", l.word(1), l.word(2))
		}
	}
	return nil
}

// isLogTarget reports a `log` line that sends logs somewhere (a syslog
// address or socket); `log global`, `no log` and stdout/stderr stay.
func isLogTarget(l *line) bool {
	if l.keyword() != "log" {
		return false
	}
	switch l.word(1) {
	case "global", "stdout", "stderr", "":
		return false
	}
	return true
}

// writer accumulates the generated config and where each line came from.
type writer struct {
	b       strings.Builder
	origins []origin
}

func (w *writer) gen(text string) {
	w.b.WriteString(text + "\n")
	w.origins = append(w.origins, origin{})
}

func (w *writer) user(l *line, text string) {
	w.b.WriteString(text + "\n")
	w.origins = append(w.origins, origin{file: l.file, line: l.num})
}

// userLine writes a user's line as it is, dropped lines as comments (so the
// generated file still reads like the user's).
func (p *plan) userLine(w *writer, l *line, rp renderParams) {
	switch {
	case p.dropped[l]:
		w.user(l, "    # (dropped by ratecheck) "+strings.TrimSpace(l.text))
	case p.servers[l]:
		w.user(l, fmt.Sprintf("    server %s %s", quoteWord(l.word(1)), rp.backendAddr))
	default:
		w.user(l, l.text)
	}
}

func quoteWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t#\"'\\") {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func genGlobal(w *writer) {
	w.gen("global")
	w.gen("    noreuseport")
}

func genDefaults(w *writer) {
	w.gen("defaults")
	w.gen("    mode http")
	w.gen("    timeout connect 5s")
	w.gen("    timeout client 60s")
	w.gen("    timeout server 60s")
}

func (p *plan) frontendHead(w *writer, rp renderParams) {
	bind := fmt.Sprintf("    bind 127.0.0.1:%d", rp.port)
	if p.bindLine != nil {
		w.user(p.bindLine, bind)
	} else {
		w.gen(bind)
	}
	w.gen(fmt.Sprintf("    http-request return status 204 hdr %s %s if { path %s }", readyHeader, rp.nonce, ReadyPath))
}

// render writes the complete configuration for one start attempt.
func (p *plan) render(rp renderParams) (string, []origin) {
	w := &writer{}
	w.gen("# Generated by ratecheck from " + p.userPath + " (" + p.mode.String() + ").")
	w.gen("# Lines without a counterpart in that file are ratecheck's; see package targets/haproxy.")
	if p.mode == modeSnippet {
		genGlobal(w)
		genDefaults(w)
		w.gen("frontend ratecheck")
		p.frontendHead(w, rp)
		for _, l := range p.lines {
			p.userLine(w, l, rp)
		}
		if p.addBackend {
			w.gen("    default_backend " + backendName)
		}
	} else {
		if !p.hasGlobal {
			genGlobal(w)
		}
		for _, s := range p.sections {
			if s.head != nil {
				w.user(s.head, s.head.text)
			}
			if s == p.target {
				p.frontendHead(w, rp)
			}
			for _, l := range s.body {
				if l == p.bindLine {
					continue
				}
				p.userLine(w, l, rp)
			}
			if s.kind == "global" {
				w.gen("    noreuseport")
				if !p.hasDefaults {
					genDefaults(w)
				}
			}
			if s == p.target && p.addBackend {
				w.gen("    default_backend " + backendName)
			}
			if s.head == nil && !p.hasDefaults && !p.hasGlobal {
				genDefaults(w)
			}
		}
	}
	w.gen("backend " + backendName)
	w.gen("    mode http")
	w.gen("    server app " + rp.backendAddr)
	return w.b.String(), w.origins
}
