package plan

import (
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestScopeSources(t *testing.T) {
	u := func(s string) *url.URL { x, _ := url.Parse(s); return x }
	a := netip.MustParseAddr
	for _, c := range []struct {
		url    string
		srcs   []netip.Addr
		own    []netip.Addr
		second string
	}{
		{"http://127.0.0.1:80/", nil, nil, "127.0.0.2"},
		{"http://127.0.0.2:80/", nil, nil, "127.0.0.3"},
		{"http://127.0.0.1:80/", []netip.Addr{a("127.0.0.2")}, []netip.Addr{a("127.0.0.2")}, "127.0.0.3"},
		{"http://192.0.2.1/", []netip.Addr{a("10.0.0.1"), a("10.0.0.2")}, []netip.Addr{a("10.0.0.1")}, "10.0.0.2"},
		{"http://192.0.2.1/", nil, nil, "invalid IP"},
		{"http://localhost:80/", nil, nil, "invalid IP"},
	} {
		own, second, why := ScopeSources(u(c.url), c.srcs)
		if !slices.Equal(own, c.own) || second.String() != c.second || (!second.IsValid() && !strings.Contains(why, "--source-addrs")) {
			t.Errorf("%s %v: own %v second %v (%s)", c.url, c.srcs, own, second, why)
		}
	}
}
