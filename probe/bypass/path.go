package bypass

import (
	"fmt"
	"strings"
)

// junkParam is the query parameter the junk-query trial adds: a name no
// application reads, with a new value each request.
const junkParam = "ratecheck"

// pathTrials spell the probe's path another way. A router that cleans or
// folds the path serves the same resource; a limit keyed on the raw target
// counts each spelling alone. A spelling the server does not serve (404, a
// redirect) is no admission and shows nothing.
func pathTrials(target string) []Trial {
	path, query, hasQuery := strings.Cut(target, "?")
	with := func(p string) string {
		if hasQuery {
			return p + "?" + query
		}
		return p
	}
	fixed := func(name, what, t string) Trial {
		return Trial{Name: name, Kind: Path, What: what + ": " + t,
			Request: func(int) Variant { return Variant{Target: t} }}
	}
	var out []Trial
	if path != "/" && path != "" {
		slash := path + "/"
		if strings.HasSuffix(path, "/") {
			slash = strings.TrimSuffix(path, "/")
		}
		out = append(out, fixed("trailing-slash", "the trailing slash toggled", with(slash)))
	}
	if p, ok := toggleLastLetter(path); ok {
		out = append(out, fixed("letter-case", "a letter's case changed", with(p)))
	}
	out = append(out, fixed("doubled-slash", "the leading slash doubled", with("/"+path)))
	if p, ok := encodeFirstLetter(path); ok {
		out = append(out, fixed("encoded-letter", "a letter percent-encoded", with(p)))
	}
	out = append(out,
		fixed("encoded-space", "%20 appended to the path", with(path+"%20")),
		fixed("encoded-tab", "%09 appended to the path", with(path+"%09")),
		Trial{Name: "junk-query", Kind: Path, What: "a query parameter no one reads, new each request (?" + junkParam + "=N)",
			Request: func(n int) Variant {
				sep := "?"
				if hasQuery {
					sep = "&"
				}
				return Variant{Target: fmt.Sprintf("%s%s%s=%d", target, sep, junkParam, n)}
			}})
	if params := strings.Split(query, "&"); hasQuery && len(params) > 1 {
		for i, j := 0, len(params)-1; i < j; i, j = i+1, j-1 {
			params[i], params[j] = params[j], params[i]
		}
		out = append(out, fixed("reordered-query", "the query's parameters reversed", path+"?"+strings.Join(params, "&")))
	}
	return out
}

// toggleLastLetter changes the case of the path's last ASCII letter.
func toggleLastLetter(path string) (string, bool) {
	b := []byte(path)
	for i := len(b) - 1; i >= 0; i-- {
		switch c := b[i]; {
		case 'a' <= c && c <= 'z':
			b[i] = c - 'a' + 'A'
			return string(b), true
		case 'A' <= c && c <= 'Z':
			b[i] = c - 'A' + 'a'
			return string(b), true
		}
	}
	return "", false
}

// encodeFirstLetter percent-encodes the path's first ASCII letter (RFC
// 3986 §2.3: an encoded unreserved character is the same character).
func encodeFirstLetter(path string) (string, bool) {
	for i := 0; i < len(path); i++ {
		if c := path[i]; ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') {
			return fmt.Sprintf("%s%%%02X%s", path[:i], c, path[i+1:]), true
		}
	}
	return "", false
}
