package bypass

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

func names(ts []Trial) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

// Every spelling of the path is another spelling of the same target, and
// nothing else: it decodes to the same path (but for case, a slash, or
// appended whitespace), and keeps the query but where it changes it.
func TestPathVariantsSpellTheSameTarget(t *testing.T) {
	ts := pathTrials("/api/items?a=1&b=2")
	want := map[string]string{
		"trailing-slash":  "/api/items/?a=1&b=2",
		"letter-case":     "/api/itemS?a=1&b=2",
		"doubled-slash":   "//api/items?a=1&b=2",
		"encoded-letter":  "/%61pi/items?a=1&b=2",
		"encoded-space":   "/api/items%20?a=1&b=2",
		"encoded-tab":     "/api/items%09?a=1&b=2",
		"junk-query":      "/api/items?a=1&b=2&ratecheck=3",
		"reordered-query": "/api/items?b=2&a=1",
	}
	if len(ts) != len(want) {
		t.Fatalf("trials %v, want %d", names(ts), len(want))
	}
	for _, tr := range ts {
		got := tr.Request(3).Target
		if got != want[tr.Name] {
			t.Errorf("%s: %q, want %q", tr.Name, got, want[tr.Name])
		}
		if tr.Name == "encoded-letter" {
			if u, err := url.Parse(got); err != nil || u.Path != "/api/items" {
				t.Errorf("%s does not decode to the path: %v %v", got, u, err)
			}
		}
	}
	// The root has no trailing slash to toggle and no letter; no query,
	// nothing to reorder, and the junk parameter starts the query.
	root := pathTrials("/")
	if n := names(root); slices.Contains(n, "trailing-slash") || slices.Contains(n, "letter-case") || slices.Contains(n, "reordered-query") {
		t.Errorf("root trials %v", n)
	}
	for _, tr := range root {
		if tr.Name == "junk-query" && tr.Request(1).Target != "/?ratecheck=1" {
			t.Errorf("root junk query %q", tr.Request(1).Target)
		}
	}
}

// Forged addresses are new on every request and never a real client's.
func TestAddressTrialsForgeANewDocumentationAddress(t *testing.T) {
	ts := addressTrials()
	if len(ts) != 2+len(clientAddressHeaders) {
		t.Fatalf("%d address trials: %v", len(ts), names(ts))
	}
	for _, tr := range ts {
		a, b := tr.Request(1), tr.Request(2)
		if slices.Equal(a.Set, b.Set) || len(a.Set) == 0 {
			t.Errorf("%s: %q then %q: not a new client each request", tr.Name, a.Set, b.Set)
		}
		for _, line := range a.Set {
			if !strings.Contains(line, "203.0.113.") && !strings.Contains(line, "198.51.100.") && !strings.Contains(line, "192.0.2.") {
				t.Errorf("%s: %q is not a documentation address", tr.Name, line)
			}
		}
	}
}

// Only what the request and the user allow is tried: HEAD for GET alone
// without --bypass-methods, cookies only when sent; and every kind is
// tried before the second trial of any.
func TestTrialsOnlyWhatIsAllowed(t *testing.T) {
	plain := names(Trials(Base{Method: "GET", Target: "/"}))
	for _, n := range []string{"method-head", "new-connection", "user-agent"} {
		if !slices.Contains(plain, n) {
			t.Errorf("GET http: no %s in %v", n, plain)
		}
	}
	for _, n := range []string{"no-cookies", "method-post", "http2", "http1.1"} {
		if slices.Contains(plain, n) {
			t.Errorf("GET http: %s tried unasked", n)
		}
	}
	full := names(Trials(Base{Method: "POST", Target: "/", Cookie: true, Methods: []string{"PUT", "POST"}}))
	for _, n := range []string{"no-cookies", "method-put"} {
		if !slices.Contains(full, n) {
			t.Errorf("POST https with cookies and PUT allowed: no %s in %v", n, full)
		}
	}
	if slices.Contains(full, "method-head") || slices.Contains(full, "method-post") {
		t.Errorf("POST: HEAD or its own method tried: %v", full)
	}
	// Over TLS the other HTTP version is tried: HTTP/2 beside HTTP/1.1,
	// HTTP/1.1 beside --http2.
	for http2, want := range map[bool]string{false: "http2", true: "http1.1"} {
		ts := Trials(Base{Method: "GET", Target: "/", TLS: true, HTTP2: http2})
		i := slices.Index(names(ts), want)
		if i < 0 || ts[i].Kind != Protocol || ts[i].Request(1).String() != map[bool]string{false: "HTTP/2", true: "HTTP/1.1"}[http2] || slices.Contains(names(ts), map[bool]string{false: "http1.1", true: "http2"}[http2]) {
			t.Errorf("https, http2=%v: trials %v, want %s of kind protocol and not the other", http2, names(ts), want)
		}
	}
	kinds := map[Kind]bool{}
	for _, tr := range Trials(Base{Method: "GET", Target: "/a"})[:len(Kinds)] {
		kinds[tr.Kind] = true
	}
	if len(kinds) != len(Kinds) {
		t.Errorf("the first %d trials cover kinds %v", len(Kinds), kinds)
	}
}
