package refserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// variant is one request a bypass trial might send after the key of
// "GET /api" from 127.0.0.1:1000 is spent.
type variant struct {
	name, method, target string
	hdr                  []string
}

func (v variant) send(h *Handler) int {
	req := httptest.NewRequest(v.method, v.target, nil)
	req.RemoteAddr = "127.0.0.1:1000"
	req.Header.Set("User-Agent", "ratecheck")
	for i := 0; i+1 < len(v.hdr); i += 2 {
		req.Header.Set(v.hdr[i], v.hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

var (
	own        = variant{"own", "GET", "/api", nil}
	slash      = variant{"trailing slash", "GET", "/api/", nil}
	junkQuery  = variant{"junk query", "GET", "/api?x=1", nil}
	upperCase  = variant{"letter case", "GET", "/API", nil}
	head       = variant{"HEAD", "HEAD", "/api", nil}
	newAgent   = variant{"User-Agent", "GET", "/api", []string{"User-Agent", "other"}}
	trueClient = variant{"True-Client-IP", "GET", "/api", []string{"True-Client-IP", "203.0.113.5"}}
	cfIP       = variant{"CF-Connecting-IP", "GET", "/api", []string{"CF-Connecting-IP", "203.0.113.6"}}
	xff        = variant{"X-Forwarded-For", "GET", "/api", []string{"X-Forwarded-For", "203.0.113.7"}}
)

// Each defect lets through exactly the variants it keys on, and its honest
// twin (scope=ip, key=peer, every method counted) lets none through.
func TestKeyDefectsAdmitTheirVariantsOnly(t *testing.T) {
	all := []variant{slash, junkQuery, upperCase, head, newAgent, trueClient, cfIP, xff}
	for _, c := range []struct {
		spec  string
		fresh []variant
	}{
		{"builtin:token_bucket?rate=1/s&burst=2&scope=ip", nil},
		{"builtin:token_bucket?rate=1/s&burst=2&key=path", []variant{slash, junkQuery, upperCase}},
		{"builtin:token_bucket?rate=1/s&burst=2&scope=ip&key=peer,path", []variant{slash, junkQuery, upperCase}},
		{"builtin:token_bucket?rate=1/s&burst=2&scope=ip&key=client-ip", []variant{trueClient, cfIP}},
		{"builtin:token_bucket?rate=1/s&burst=2&scope=ip&key=forwarded", []variant{xff}},
		{"builtin:token_bucket?rate=1/s&burst=2&scope=ip&key=user-agent", []variant{newAgent}},
		{"builtin:token_bucket?rate=1/s&burst=2&scope=ip&methods=GET,POST", []variant{head}},
	} {
		for _, v := range all {
			h, _ := fakeClockHandler(t, c.spec)
			for range 2 {
				if code := own.send(h); code != 200 {
					t.Fatalf("%s: exhausting: %d", c.spec, code)
				}
			}
			if code := own.send(h); code != 429 {
				t.Fatalf("%s: not exhausted: %d", c.spec, code)
			}
			want := false
			for _, f := range c.fresh {
				want = want || f.name == v.name
			}
			if got := v.send(h) == 200; got != want {
				t.Errorf("%s: %s admitted=%v, want %v", c.spec, v.name, got, want)
			}
		}
	}
}

// A request the limit does not count carries no quota headers: they would
// describe a counter it never touched.
func TestUncountedMethodHasNoQuotaHeaders(t *testing.T) {
	h, _ := fakeClockHandler(t, "builtin:token_bucket?rate=1/s&burst=2&methods=GET")
	req := httptest.NewRequest("HEAD", "/", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Header().Get("RateLimit-Policy") != "" || rec.Header().Get("X-RateLimit-Limit") != "" {
		t.Fatalf("HEAD: %d %v", rec.Code, rec.Header())
	}
}

func TestKeyAndMethodsRefuseWhatTheyCannotRead(t *testing.T) {
	for spec, want := range map[string]string{
		"builtin:token_bucket?key=client-ip":               "needs scope=ip",
		"builtin:token_bucket?scope=ip&key=peer,forwarded": "two address sources",
		"builtin:token_bucket?scope=ip&key=cookie":         "use peer",
		"builtin:token_bucket?methods=GET,":                "HTTP methods",
		"builtin:token_bucket?methods=G%20T":               "HTTP methods",
	} {
		if _, err := ParseBuiltin(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", spec, err, want)
		}
	}
}
