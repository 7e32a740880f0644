package haproxy

import (
	"fmt"
	"os"
	"strings"
)

// line is one line of the user's file.
type line struct {
	file  string
	num   int    // 1-based
	text  string // as written, without the newline
	words []string
}

func (l *line) keyword() string {
	if len(l.words) == 0 {
		return ""
	}
	return l.words[0]
}

func (l *line) word(i int) string {
	if i < len(l.words) {
		return l.words[i]
	}
	return ""
}

func (l *line) where() string { return fmt.Sprintf("%s:%d", l.file, l.num) }

// readLines reads path and splits every line into HAProxy words.
func readLines(path string) ([]*line, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	text := strings.ReplaceAll(string(b), "\r\n", "\n")
	text = strings.TrimSuffix(text, "\n")
	var out []*line
	for i, t := range strings.Split(text, "\n") {
		out = append(out, &line{file: path, num: i + 1, text: t, words: splitWords(t)})
	}
	return out, nil
}

// splitWords splits a config line as HAProxy does, enough to read keywords
// and addresses: words separated by blanks, `#` starting a comment outside
// quotes, "double" quotes with backslash escapes, 'single' quotes verbatim.
// Anything it gets wrong haproxy -c reports, at the user's line.
func splitWords(s string) []string {
	var words []string
	var cur strings.Builder
	in := false // inside a word
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case quote == '"':
			switch {
			case c == '"':
				quote = 0
			case c == '\\' && i+1 < len(s):
				i++
				cur.WriteByte(s[i])
			default:
				cur.WriteByte(c)
			}
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case c == '"' || c == '\'':
			quote = c
			in = true
		case c == '#':
			i = len(s)
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// sectionKeywords start a section in an HAProxy configuration.
var sectionKeywords = map[string]bool{
	"global": true, "defaults": true, "frontend": true, "backend": true, "listen": true,
	"peers": true, "resolvers": true, "userlist": true, "mailers": true, "program": true,
	"cache": true, "http-errors": true, "ring": true, "fcgi-app": true, "crt-store": true,
	"traces": true,
}

// refusedSections open connections or run commands that ratecheck cannot
// confine to loopback.
var refusedSections = map[string]string{
	"peers":   "it opens a listener and connects to the other peers",
	"program": "HAProxy would run its command",
	"ring":    "its servers receive log traffic",
}

// droppedGlobal are global keywords that would touch the system or change
// how HAProxy runs; ratecheck runs it in the foreground from a private
// directory.
var droppedGlobal = map[string]string{
	"daemon":        "ratecheck runs haproxy in the foreground (-db)",
	"master-worker": "ratecheck runs haproxy in the foreground (-db)",
	"pidfile":       "ratecheck tracks the process itself",
	"chroot":        "ratecheck runs haproxy unconfined, from a private directory",
	"user":          "ratecheck runs haproxy as the invoking user",
	"group":         "ratecheck runs haproxy as the invoking user",
	"uid":           "ratecheck runs haproxy as the invoking user",
	"gid":           "ratecheck runs haproxy as the invoking user",
	"nbproc":        "ratecheck runs haproxy as one process",
}

// section is one section of a configuration with sections.
type section struct {
	kind string // "global", "frontend", …; "" for lines before any section
	name string
	head *line // nil for the generated or leading pseudo-section
	body []*line
}

func sectionsOf(lines []*line) []*section {
	var out []*section
	cur := &section{}
	for _, l := range lines {
		if sectionKeywords[l.keyword()] {
			out = append(out, cur)
			cur = &section{kind: l.keyword(), name: l.word(1), head: l}
			continue
		}
		cur.body = append(cur.body, l)
	}
	return append(out, cur)
}

func isProxy(kind string) bool { return kind == "frontend" || kind == "listen" }

func hasKeyword(ls []*line, kws ...string) bool {
	for _, l := range ls {
		for _, k := range kws {
			if l.keyword() == k {
				return true
			}
		}
	}
	return false
}
