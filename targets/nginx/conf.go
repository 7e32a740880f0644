package nginx

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// This file holds a small reader for nginx's configuration syntax. It follows
// ngx_conf_read_token closely enough to split a file into directives and
// blocks with their line numbers; nginx itself (nginx -t) remains the judge of
// what the directives mean.

type tokKind int

const (
	tokWord tokKind = iota
	tokSemi
	tokOpen
	tokClose
)

type token struct {
	kind tokKind
	raw  string // exactly as written, quotes and backslashes included
	val  string // the value nginx sees: quotes removed, \" \' \\ \t \r \n unescaped
	line int
}

// stmt is one directive, with or without a block.
type stmt struct {
	name      string
	args      []token
	block     []*stmt
	hasBlock  bool
	file      string // "" for lines ratecheck generates
	line      int    // line of the directive name
	endLine   int    // line of the ';' or '{' that ends the directive: where nginx reports errors
	closeLine int    // line of the closing '}' of a block
	rawName   string

	ph            placeholder // rendered from the writer's start-time values
	defaultServer bool        // for phListen
}

type placeholder int

const (
	phNone    placeholder = iota
	phListen              // listen 127.0.0.1:<port> [default_server]
	phBackend             // proxy_pass <scheme>://ratecheck_backend
)

func (s *stmt) arg(i int) string {
	if i < len(s.args) {
		return s.args[i].val
	}
	return ""
}

// syntaxError is a problem found while reading a config file.
type syntaxError struct {
	file string
	line int
	msg  string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s:%d: %s", e.file, e.line, e.msg) }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// lex splits src into tokens the way ngx_conf_read_token does.
func lex(file, src string) ([]token, error) {
	var toks []token
	line := 1
	i := 0
	n := len(src)
	for i < n {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case isSpace(c):
			i++
		case c == ';':
			toks = append(toks, token{kind: tokSemi, raw: ";", line: line})
			i++
		case c == '{':
			toks = append(toks, token{kind: tokOpen, raw: "{", line: line})
			i++
		case c == '}':
			toks = append(toks, token{kind: tokClose, raw: "}", line: line})
			i++
		case c == '#':
			for i < n && src[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			q := c
			start, startLine := i, line
			i++
			closed := false
			for i < n {
				ch := src[i]
				if ch == '\n' {
					line++
				}
				if ch == '\\' && i+1 < n {
					if src[i+1] == '\n' {
						line++
					}
					i += 2
					continue
				}
				i++
				if ch == q {
					closed = true
					break
				}
			}
			if !closed {
				return nil, &syntaxError{file, startLine, "unexpected end of file: unterminated quoted string"}
			}
			if i < n && !isSpace(src[i]) && src[i] != ';' && src[i] != '{' {
				return nil, &syntaxError{file, line, fmt.Sprintf("unexpected %q", string(src[i]))}
			}
			raw := src[start:i]
			toks = append(toks, token{kind: tokWord, raw: raw, val: unescape(raw[1 : len(raw)-1]), line: startLine})
		default:
			start, startLine := i, line
			variable := false
			for i < n {
				ch := src[i]
				if ch == '{' && variable {
					i++
					continue
				}
				variable = false
				if ch == '\\' && i+1 < n {
					if src[i+1] == '\n' {
						line++
					}
					i += 2
					continue
				}
				if ch == '$' {
					variable = true
					i++
					continue
				}
				if isSpace(ch) || ch == ';' || ch == '{' {
					break
				}
				i++
			}
			raw := src[start:i]
			toks = append(toks, token{kind: tokWord, raw: raw, val: unescape(raw), line: startLine})
		}
	}
	return toks, nil
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '"', '\'', '\\':
				b.WriteByte(s[i+1])
				i++
				continue
			case 't':
				b.WriteByte('\t')
				i++
				continue
			case 'r':
				b.WriteByte('\r')
				i++
				continue
			case 'n':
				b.WriteByte('\n')
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// parse reads a whole file into statements.
func parse(file, src string) ([]*stmt, error) {
	toks, err := lex(file, src)
	if err != nil {
		return nil, err
	}
	p := &parser{file: file, toks: toks, lastLine: strings.Count(src, "\n") + 1}
	stmts, err := p.list(false)
	if err != nil {
		return nil, err
	}
	return stmts, nil
}

type parser struct {
	file     string
	toks     []token
	pos      int
	lastLine int
}

func (p *parser) list(inBlock bool) ([]*stmt, error) {
	var out []*stmt
	for {
		if p.pos >= len(p.toks) {
			if inBlock {
				return nil, &syntaxError{p.file, p.lastLine, `unexpected end of file, expecting "}"`}
			}
			return out, nil
		}
		t := p.toks[p.pos]
		switch t.kind {
		case tokClose:
			if !inBlock {
				return nil, &syntaxError{p.file, t.line, `unexpected "}"`}
			}
			return out, nil
		case tokSemi:
			return nil, &syntaxError{p.file, t.line, `unexpected ";"`}
		case tokOpen:
			return nil, &syntaxError{p.file, t.line, `unexpected "{"`}
		}
		s := &stmt{name: t.val, rawName: t.raw, file: p.file, line: t.line}
		p.pos++
	args:
		for {
			if p.pos >= len(p.toks) {
				return nil, &syntaxError{p.file, p.lastLine, `unexpected end of file, expecting ";" or "}"`}
			}
			a := p.toks[p.pos]
			p.pos++
			switch a.kind {
			case tokWord:
				s.args = append(s.args, a)
			case tokSemi:
				s.endLine = a.line
				break args
			case tokOpen:
				s.endLine = a.line
				s.hasBlock = true
				body, err := p.list(true)
				if err != nil {
					return nil, err
				}
				s.block = body
				s.closeLine = p.toks[p.pos].line
				p.pos++ // the '}'
				break args
			case tokClose:
				return nil, &syntaxError{p.file, a.line, `unexpected "}"`}
			}
		}
		out = append(out, s)
	}
}

const maxIncludeDepth = 16

// loadFile reads and parses path and splices the files its include
// directives name into the tree. Relative include paths are resolved against
// confDir, as nginx does with its configuration prefix (the directory of the
// file given to -c).
func loadFile(path, confDir string, depth int) ([]*stmt, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	stmts, err := parse(path, string(data))
	if err != nil {
		return nil, err
	}
	return expandIncludes(stmts, confDir, depth)
}

func expandIncludes(stmts []*stmt, confDir string, depth int) ([]*stmt, error) {
	var out []*stmt
	for _, s := range stmts {
		if s.name == "include" && !s.hasBlock {
			if len(s.args) != 1 {
				return nil, &syntaxError{s.file, s.endLine, `invalid number of arguments in "include" directive`}
			}
			if depth >= maxIncludeDepth {
				return nil, &syntaxError{s.file, s.endLine, "includes nested too deeply (an include loop?)"}
			}
			pat := s.arg(0)
			if !filepath.IsAbs(pat) {
				pat = filepath.Join(confDir, pat)
			}
			var files []string
			if strings.ContainsAny(pat, "*?[") {
				m, err := filepath.Glob(pat)
				if err != nil {
					return nil, &syntaxError{s.file, s.endLine, fmt.Sprintf("include %q: %v", s.arg(0), err)}
				}
				sort.Strings(m)
				files = m
			} else {
				files = []string{pat}
			}
			for _, f := range files {
				if fi, err := os.Stat(f); err == nil && fi.IsDir() {
					continue
				}
				sub, err := loadFile(f, confDir, depth+1)
				if err != nil {
					if se, ok := err.(*syntaxError); ok {
						return nil, se
					}
					return nil, &syntaxError{s.file, s.endLine, fmt.Sprintf("include %q: %v (relative includes are resolved against the directory of the main config file, as with nginx -c)", s.arg(0), err)}
				}
				out = append(out, sub...)
			}
			continue
		}
		if s.hasBlock {
			b, err := expandIncludes(s.block, confDir, depth)
			if err != nil {
				return nil, err
			}
			s.block = b
		}
		out = append(out, s)
	}
	return out, nil
}

// quote renders s as a double-quoted nginx string.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// genStmt builds a statement that ratecheck adds; its words are written raw.
func genStmt(name string, args ...string) *stmt {
	s := &stmt{name: name, rawName: name}
	for _, a := range args {
		s.args = append(s.args, token{kind: tokWord, raw: a, val: a})
	}
	return s
}

func genBlock(name string, args []string, body ...*stmt) *stmt {
	s := genStmt(name, args...)
	s.hasBlock = true
	s.block = body
	return s
}

// origin is where a generated line came from.
type origin struct {
	file string
	line int
}

// writer renders statements and remembers, for every output line, the user's
// file and line it came from.
type writer struct {
	port       int
	backendURL string
	tlsCert    string // set: each listen placeholder is a TLS listener with this certificate
	tlsKey     string
	http2      bool // the TLS listener offers HTTP/2 too

	b       strings.Builder
	origins []origin // origins[i] is the origin of output line i+1
}

func (w *writer) line(indent int, text string, o origin) {
	w.b.WriteString(strings.Repeat("    ", indent))
	w.b.WriteString(text)
	w.b.WriteByte('\n')
	// A quoted argument may span lines; every physical line gets an origin.
	for k := strings.Count(text, "\n"); k >= 0; k-- {
		w.origins = append(w.origins, o)
	}
}

func (w *writer) stmts(indent int, ss []*stmt) {
	for _, s := range ss {
		w.stmt(indent, s)
	}
}

func (w *writer) stmt(indent int, s *stmt) {
	var b strings.Builder
	b.WriteString(s.rawName)
	switch s.ph {
	case phListen:
		fmt.Fprintf(&b, " 127.0.0.1:%d", w.port)
		if s.defaultServer {
			b.WriteString(" default_server")
		}
		if w.tlsCert != "" {
			b.WriteString(" ssl")
		}
		if w.tlsCert != "" && w.http2 {
			b.WriteString(" http2") // nginx 1.22's spelling; 1.25 also takes `http2 on;`
		}
	case phBackend:
		b.WriteString(" " + w.backendURL)
	}
	for _, a := range s.args {
		b.WriteByte(' ')
		b.WriteString(a.raw)
	}
	if !s.hasBlock {
		b.WriteByte(';')
		w.line(indent, b.String(), origin{s.file, s.endLine})
		if s.ph == phListen && w.tlsCert != "" {
			w.line(indent, "ssl_certificate "+quote(w.tlsCert)+";", origin{})
			w.line(indent, "ssl_certificate_key "+quote(w.tlsKey)+";", origin{})
		}
		return
	}
	b.WriteString(" {")
	w.line(indent, b.String(), origin{s.file, s.endLine})
	w.stmts(indent+1, s.block)
	w.line(indent, "}", origin{s.file, s.closeLine})
}
