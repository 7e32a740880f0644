package haproxy

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ConfigError is a configuration that HAProxy, or ratecheck before it,
// refused. File and Line point into the user's file (translated from the
// generated config); Line is 0 when nobody could tell the line.
type ConfigError struct {
	File string
	Line int
	// HAProxyMessage is HAProxy's own first alert, without its location
	// (which names the generated file), e.g. `unknown keyword 'foo' in
	// 'frontend' section`. Empty when ratecheck found the problem itself;
	// then Reason says what it is.
	HAProxyMessage string
	Reason         string

	inGenerated   bool // HAProxy pointed at a line ratecheck added
	generatedLine int
	generated     string // the generated config, when kept (Options.Keep)
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	switch {
	case e.HAProxyMessage == "":
		fmt.Fprintf(&b, "%s: ratecheck cannot run this haproxy config: %s.", loc, e.Reason)
	case e.inGenerated:
		fmt.Fprintf(&b, "haproxy rejected the config ratecheck generated from %s: %s, at generated line %d, which ratecheck added itself (likely a clash with a line in your file).", e.File, e.HAProxyMessage, e.generatedLine)
	case e.Line == 0:
		fmt.Fprintf(&b, "%s: haproxy rejected the configuration: %s (haproxy names no line for this error).", e.File, e.HAProxyMessage)
	default:
		fmt.Fprintf(&b, "%s: haproxy rejected the configuration: %s (found by `haproxy -c` on the complete config ratecheck generates from your file; the line is translated back to your file).", loc, e.HAProxyMessage)
	}
	if e.generated != "" {
		fmt.Fprintf(&b, " The generated config is kept at %s.", e.generated)
	}
	return b.String()
}

// lineMap translates positions in the generated config back to the user's.
type lineMap struct {
	user    string
	gen     string
	origins []origin
}

func (m *lineMap) lookup(n int) (origin, bool) {
	if n < 1 || n > len(m.origins) {
		return origin{}, false
	}
	o := m.origins[n-1]
	return o, o.file != ""
}

// HAProxy names a position as `[FILE:LINE]`, after "parsing" or "Binding".
var posRE = regexp.MustCompile(`\[([^\[\]:]+):(\d+)\]`)

// translate rewrites every [GENERATED:N] in HAProxy's output to the user's
// file and line.
func (m *lineMap) translate(text string) string {
	return posRE.ReplaceAllStringFunc(text, func(s string) string {
		sm := posRE.FindStringSubmatch(s)
		if sm[1] != m.gen {
			return s
		}
		n, _ := strconv.Atoi(sm[2])
		if o, ok := m.lookup(n); ok {
			return fmt.Sprintf("[%s:%d]", o.file, o.line)
		}
		return fmt.Sprintf("[a line ratecheck generated (%s:%d)]", m.gen, n)
	})
}

// `[ALERT]    (1234) : config : parsing [F:12] : message`; the "config :"
// part is absent in some versions and messages.
var alertRE = regexp.MustCompile(`^\[(ALERT|WARNING)\]\s*(?:\(\d+\)\s*)?:\s*(?:config\s*:\s*)?(.*)$`)

// leadRE is a position at the head of a message, which ConfigError carries
// in File and Line instead.
var leadRE = regexp.MustCompile(`^(?:parsing\s*)?\[([^\[\]:]+):(\d+)\]\s*:?\s*`)

// summaries are HAProxy's closing alerts, which say nothing of their own.
var summaries = []string{"Error(s) found in configuration file", "Fatal errors found in configuration", "Some protocols failed to start their listeners"}

// configError extracts HAProxy's first real alert from haproxy -c output.
func (m *lineMap) configError(out string) *ConfigError {
	for _, raw := range strings.Split(out, "\n") {
		sm := alertRE.FindStringSubmatch(strings.TrimSpace(raw))
		if sm == nil || sm[1] != "ALERT" || isSummary(sm[2]) {
			continue
		}
		msg := sm[2]
		ce := &ConfigError{File: m.user}
		if lm := leadRE.FindStringSubmatch(msg); lm != nil {
			n, _ := strconv.Atoi(lm[2])
			msg = msg[len(lm[0]):]
			switch {
			case lm[1] != m.gen:
				ce.File, ce.Line = lm[1], n
			default:
				if o, ok := m.lookup(n); ok {
					ce.File, ce.Line = o.file, o.line
				} else {
					ce.inGenerated, ce.generatedLine = true, n
				}
			}
		}
		ce.HAProxyMessage = strings.TrimSuffix(m.translate(msg), ".")
		return ce
	}
	return nil
}

// warnings are HAProxy's warnings from haproxy -c, translated to the
// user's lines: they become Instance.Notes.
func (m *lineMap) warnings(out string) []string {
	var ws []string
	for _, raw := range strings.Split(out, "\n") {
		sm := alertRE.FindStringSubmatch(strings.TrimSpace(raw))
		if sm != nil && sm[1] == "WARNING" {
			ws = append(ws, "haproxy warns: "+m.translate(sm[2]))
		}
	}
	return ws
}

func isSummary(msg string) bool {
	for _, s := range summaries {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
