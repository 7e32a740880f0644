package refserver

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// doFrom sends one request from a peer address with extra headers.
func doFrom(h *Handler, peer string, hdr ...string) int {
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = peer
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// Each scope counts what it should: a burst of 2 exhausted by one identity
// is whole for another identity of the scope's kind and for no other kind.
func TestScopesKeyWhatTheySay(t *testing.T) {
	for _, c := range []struct {
		spec string
		// which identities get a fresh quota after 127.0.0.1:1000 spent it
		otherPort, otherIP, spoof bool
	}{
		{"builtin:token_bucket?rate=1/s&burst=2", false, false, false},
		{"builtin:token_bucket?rate=1/s&burst=2&scope=ip", false, true, false},
		{"builtin:token_bucket?rate=1/s&burst=2&scope=connection", true, true, false},
		{"builtin:token_bucket?rate=1/s&burst=2&scope=ip&key=forwarded", false, true, true},
	} {
		for _, other := range []struct {
			peer  string
			hdr   []string
			fresh bool
		}{
			{"127.0.0.1:1001", nil, c.otherPort},
			{"127.0.0.2:1000", nil, c.otherIP},
			{"127.0.0.1:1000", []string{"X-Forwarded-For", "203.0.113.7, 10.0.0.1"}, c.spoof},
			{"127.0.0.1:1000", []string{"X-Real-IP", "203.0.113.8"}, c.spoof},
			{"127.0.0.1:1000", []string{"Forwarded", `for="203.0.113.9";proto=http`}, c.spoof},
		} {
			h, _ := fakeClockHandler(t, c.spec)
			for range 2 {
				if code := doFrom(h, "127.0.0.1:1000"); code != 200 {
					t.Fatalf("%s: exhausting: %d", c.spec, code)
				}
			}
			if code := doFrom(h, "127.0.0.1:1000"); code != 429 {
				t.Fatalf("%s: not exhausted: %d", c.spec, code)
			}
			if got := doFrom(h, other.peer, other.hdr...) == 200; got != other.fresh {
				t.Errorf("%s: from %s %v admitted=%v, want %v", c.spec, other.peer, other.hdr, got, other.fresh)
			}
		}
	}
}

func TestKeyForwardedNeedsScopeIP(t *testing.T) {
	_, err := ParseBuiltin("builtin:token_bucket?key=forwarded")
	if err == nil || !strings.Contains(err.Error(), "needs scope=ip") {
		t.Fatalf("err %v", err)
	}
	if _, err := ParseBuiltin("builtin:token_bucket?scope=ip&key=nope"); err == nil || !strings.Contains(err.Error(), "use peer") {
		t.Fatalf("err %v", err)
	}
}
