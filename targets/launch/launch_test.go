package launch

import (
	"context"
	"errors"
	"fmt"
	"github.com/ratecheck/ratecheck/internal/testenv"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/targets/nginx"
)

// td is a config in the repository's testdata/nginx.
func td(name string) string { return filepath.Join("..", "..", "testdata", "nginx", name) }

func needNginx(t *testing.T) { testenv.NeedNginx(t) }

func get(t *testing.T, url string) int {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}, Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// assertStopped checks that nothing of the nginx target is left: no process
// mentions its directory and the directory is gone.
func assertStopped(t *testing.T, tg *Target) {
	t.Helper()
	if ps := testenv.ProcsMentioning(tg.Dir); len(ps) > 0 {
		t.Errorf("nginx processes still running for %s: %v", tg.Dir, ps)
	}
	if _, err := os.Stat(tg.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory %s not removed (stat: %v)", tg.Dir, err)
	}
}

func TestOpenNginx(t *testing.T) {
	needNginx(t)
	tg, err := OpenWith(context.Background(), "nginx:"+td("burst-nodelay.conf"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tg.Kind != KindNginx || !tg.Fresh() || !strings.HasPrefix(tg.URL, "http://127.0.0.1:") || tg.Dir == "" {
		t.Fatalf("target %+v", tg)
	}
	if ps := testenv.ProcsMentioning(tg.Dir); len(ps) == 0 {
		t.Fatalf("no nginx running from %s", tg.Dir)
	}
	// rate=10r/s burst=5 nodelay: 6 pass, then 503 (sequential requests are
	// far faster than the 100 ms nginx needs to forgive one).
	var got []int
	for range 7 {
		got = append(got, get(t, tg.URL))
	}
	if fmt.Sprint(got) != "[200 200 200 200 200 200 503]" {
		t.Errorf("statuses %v, want six 200 then 503", got)
	}
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	assertStopped(t, tg)
	if err := tg.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestOpenNginxNotes(t *testing.T) {
	needNginx(t)
	tg, err := OpenWith(context.Background(), "nginx:"+td("full.conf"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if n := strings.Join(tg.Notes, "\n"); !strings.Contains(n, "full.conf:18: listen") {
		t.Errorf("notes %q do not mention the rewritten listen", n)
	}
}

func TestOpenNginxKeep(t *testing.T) {
	needNginx(t)
	tg, err := OpenWith(context.Background(), "nginx:"+td("burst.conf"), Options{Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tg.Dir) })
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	if ps := testenv.ProcsMentioning(tg.Dir); len(ps) > 0 {
		t.Errorf("processes left: %v", ps)
	}
	if _, err := os.Stat(filepath.Join(tg.Dir, "nginx.conf")); err != nil {
		t.Errorf("Keep: generated config not kept: %v", err)
	}
}

func TestOpenNginxContextCancelStops(t *testing.T) {
	needNginx(t)
	ctx, cancel := context.WithCancel(context.Background())
	tg, err := OpenWith(ctx, "nginx:"+td("burst.conf"), Options{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	defer tg.Close()
	cancel()
	// Stop's own bound (SIGTERM, then SIGKILL) is well under this.
	select {
	case <-tg.Stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("nginx not stopped 30 s after the context was cancelled")
	}
	assertStopped(t, tg)
}

func TestOpenNginxBadConfigIsUsageError(t *testing.T) {
	needNginx(t)
	for conf, line := range map[string]int{"bad.conf": 5, "bad-zone.conf": 6} {
		_, err := OpenWith(context.Background(), "nginx:"+td(conf), Options{})
		var ue *UsageError
		var ce *nginx.ConfigError
		if !errors.As(err, &ue) || !errors.As(err, &ce) {
			t.Fatalf("%s: error %T %v, want a UsageError wrapping *nginx.ConfigError", conf, err, err)
		}
		if want := fmt.Sprintf("testdata/nginx/%s:%d: nginx rejected", conf, line); !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q does not contain %q", conf, err, want)
		}
	}
}

func TestOpenNginxUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for spec, want := range map[string]string{
		"nginx:":                           "name the config file",
		"nginx:" + filepath.Join(dir, "x"): "no such file",
		"nginx:" + dir:                     "is a directory",
		"ftp://example.com/":               "nginx:PATH",
	} {
		_, err := OpenWith(context.Background(), spec, Options{})
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want a UsageError containing %q", spec, err, want)
		}
	}
	// An explicit binary that is not there is a flag to fix.
	_, err := OpenWith(context.Background(), "nginx:"+td("burst.conf"), Options{NginxBin: filepath.Join(dir, "no-nginx")})
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--nginx-bin") {
		t.Errorf("missing --nginx-bin: %v, want a UsageError naming --nginx-bin", err)
	}
}

// nginx not installed is the environment, not the user's target: it must not
// be a UsageError (exit 3, not 2), and the install hint must survive.
func TestOpenNginxNotInstalled(t *testing.T) {
	saved := startNginx
	defer func() { startNginx = saved }()
	startNginx = func(context.Context, string, nginx.Options) (*nginx.Instance, error) {
		return nil, nginx.ErrNotFound
	}
	_, err := OpenWith(context.Background(), "nginx:"+td("burst.conf"), Options{})
	var ue *UsageError
	if err == nil || errors.As(err, &ue) || !errors.Is(err, nginx.ErrNotFound) {
		t.Fatalf("error %v, want nginx.ErrNotFound and no UsageError", err)
	}
	if !strings.Contains(err.Error(), "apt-get install nginx-light") {
		t.Errorf("error %q lost the install hint", err)
	}
}

func TestOpenBadURLIsUsageError(t *testing.T) {
	for spec, msg := range map[string]string{
		"http://":                       "not a valid URL",
		"http://:8080/":                 "not a valid URL",
		"http://[::1":                   "not a valid URL",
		"http://127.0.0.1:99999/":       `port "99999" is not a number from 1 to 65535`,
		"http://127.0.0.1:0/":           `port "0"`,
		"http://127.0.0.1:/":            `port ""`,
		"http://127.0.0.1:8080/a b":     "space or control character at byte 24",
		"http://127.0.0.1:8080/?q=a\tb": "space or control character",
	} {
		_, err := Open(context.Background(), spec)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), msg) {
			t.Errorf("Open(%q) = %v, want a UsageError containing %q", spec, err, msg)
		}
	}
}

func TestOpenURLAndBuiltin(t *testing.T) {
	tg, err := Open(context.Background(), "http://127.0.0.1:1/")
	if err != nil || tg.Kind != KindURL || tg.Fresh() {
		t.Fatalf("URL target %+v, %v", tg, err)
	}
	tg, err = Open(context.Background(), "builtin:token_bucket?rate=10/s&burst=2")
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if tg.Kind != KindBuiltin || !tg.Fresh() {
		t.Errorf("builtin target %+v", tg)
	}
}
