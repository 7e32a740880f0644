package headers

import (
	"net/http"
	"sort"
	"strings"
)

// fieldLines returns every field line for name. http.Header from net/http is
// canonicalised, but a hand-built map may not be, and field names are
// case-insensitive (RFC 9110 §5.1), so fall back to a case-insensitive scan.
func fieldLines(h http.Header, name string) []string {
	if v := h.Values(name); len(v) > 0 {
		return v
	}
	var keys []string
	for k := range h {
		if strings.EqualFold(k, name) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys) // deterministic when several spellings of one name exist
	var out []string
	for _, k := range keys {
		out = append(out, h[k]...)
	}
	return out
}

// trimOWS removes the optional whitespace around a field value (RFC 9110
// §5.5: it is not part of the value).
func trimOWS(s string) string { return strings.Trim(s, " \t") }
